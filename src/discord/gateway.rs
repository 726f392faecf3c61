//! Mode B, the gateway (serenity): guild and direct messages and slash commands, and the
//! global commands registered at `ready` and again when a reload changes their choices.

use super::*;

/// Strips mentions of the bot (`<@id>`, `<@!id>`) from a message's text.
pub fn strip_bot_mentions(text: &str, bot: UserId) -> String {
    let a = format!("<@{bot}>");
    let b = format!("<@!{bot}>");
    text.replace(&a, " ")
        .replace(&b, " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The neutral inbound message of a gateway message, or None for bots' messages.
pub fn inbound_from_message(msg: &Message, bot: UserId) -> Option<Inbound> {
    if msg.author.bot || msg.author.id == bot {
        return None;
    }
    let mentions_bot = msg.mentions_user_id(bot);
    let replies_to_bot = msg
        .referenced_message
        .as_ref()
        .is_some_and(|r| r.author.id == bot);
    Some(Inbound {
        channel: Channel::Discord,
        chat: msg.channel_id.to_string(),
        user: msg.author.id.to_string(),
        message_id: msg.id.to_string(),
        text: strip_bot_mentions(&msg.content, bot),
        group: msg.guild_id.is_some(),
        mentions_bot,
        replies_to_bot,
        // Settings change through the `/auto` slash command, whose member permissions
        // Discord supplies.
        admin: false,
        command: None,
    })
}

/// Sends `answer` to `channel_id` as a reply to `reply_to`: markdown parts of at most 2000
/// characters, the first carrying the message reference and the embed.
pub async fn send_reply(
    http: &Http,
    channel_id: ChannelId,
    reply_to: MessageId,
    answer: &Answer,
) -> Result<(), serenity::Error> {
    let r = render_answer(answer);
    for (i, part) in r.parts.iter().enumerate() {
        let mut m = CreateMessage::new()
            .content(part)
            .allowed_mentions(no_pings());
        if i == 0 {
            m = m.reference_message((channel_id, reply_to));
            if let Some(e) = r.embed() {
                m = m.embed(e);
            }
        }
        channel_id.send_message(http, m).await?;
    }
    Ok(())
}

/// Sends a plain text reply (a notice).
pub async fn send_text(
    http: &Http,
    channel_id: ChannelId,
    reply_to: MessageId,
    text: &str,
) -> Result<(), serenity::Error> {
    let m = CreateMessage::new()
        .content(cut(text, DISCORD_MAX_CHARS))
        .reference_message((channel_id, reply_to))
        .allowed_mentions(no_pings());
    channel_id.send_message(http, m).await.map(|_| ())
}

/// The gateway event handler.
pub struct Handler {
    chat: Chat,
    console_url: String,
    /// The bot's id and its chat layer (with its name), known from `ready`.
    me: OnceLock<(UserId, Arc<Chat>)>,
    commands: Arc<CommandSync>,
    /// Set once the task that follows catalog reloads runs (`ready` comes again on
    /// every reconnect).
    following: std::sync::atomic::AtomicBool,
}

/// The global slash commands as last registered, so that a reconnect or a reload that
/// leaves their choices as they were costs no call to Discord.
#[derive(Default)]
pub struct CommandSync {
    registered: tokio::sync::Mutex<Option<serde_json::Value>>,
}

impl CommandSync {
    /// Registers the commands for `catalog` unless exactly these are registered already;
    /// true when it called Discord. The application id must be set on `http`.
    pub async fn sync(&self, http: &Http, catalog: &Catalog) -> serenity::Result<bool> {
        let defs = command_definitions(catalog);
        let mut registered = self.registered.lock().await;
        if registered.as_ref() == Some(&defs) {
            return Ok(false);
        }
        let c = http.create_global_commands(&defs).await?;
        tracing::info!(commands = c.len(), "discord commands registered");
        *registered = Some(defs);
        Ok(true)
    }

    /// Registers the commands again after every reload of `live` that changes them,
    /// until `live` is dropped (the task holds it weakly).
    pub fn follow(
        self: Arc<Self>,
        http: Arc<Http>,
        live: &Arc<Live>,
    ) -> impl Future<Output = ()> + Send + 'static {
        let mut changes = live.changes();
        changes.mark_unchanged();
        let live = Arc::downgrade(live);
        async move {
            while changes.changed().await.is_ok() {
                let Some(advisor) = live.upgrade().map(|l| l.get()) else {
                    return;
                };
                if let Err(e) = self.sync(&http, &advisor.catalog).await {
                    tracing::warn!(error = %e, "discord: updating commands after a reload failed");
                }
            }
        }
    }
}

impl Handler {
    pub fn new(chat: &Chat, console_url: &str) -> Handler {
        Handler {
            chat: chat.clone(),
            console_url: console_url.to_string(),
            me: OnceLock::new(),
            commands: Arc::default(),
            following: Default::default(),
        }
    }

    fn chat_for(&self, name: &str) -> Arc<Chat> {
        Arc::new(self.chat.named(name))
    }

    async fn me(&self, http: &Http) -> Option<(UserId, Arc<Chat>)> {
        if let Some(me) = self.me.get() {
            return Some(me.clone());
        }
        match http.get_current_user().await {
            Ok(u) => Some(
                self.me
                    .get_or_init(|| (u.id, self.chat_for(&u.name)))
                    .clone(),
            ),
            Err(e) => {
                tracing::warn!(error = %e, "discord: cannot get the bot user");
                None
            }
        }
    }
}

#[async_trait]
impl EventHandler for Handler {
    async fn ready(&self, ctx: Context, ready: Ready) {
        let _ = self
            .me
            .set((ready.user.id, self.chat_for(&ready.user.name)));
        ctx.http.set_application_id(ready.application.id);
        tracing::info!(bot = %ready.user.name, guilds = ready.guilds.len(), "discord gateway ready");
        let advisor = self.chat.advisor.get();
        if let Err(e) = self.commands.sync(&ctx.http, &advisor.catalog).await {
            tracing::warn!(error = %e, "discord: registering commands failed");
        }
        if !self
            .following
            .swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            let follow =
                Arc::clone(&self.commands).follow(Arc::clone(&ctx.http), &self.chat.advisor);
            tokio::spawn(follow);
        }
    }

    async fn message(&self, ctx: Context, msg: Message) {
        if msg.author.bot {
            return;
        }
        let Some((bot, chat)) = self.me(&ctx.http).await else {
            return;
        };
        let Some(inbound) = inbound_from_message(&msg, bot) else {
            return;
        };
        let sent = match chat.handle(&inbound).await {
            Outcome::Answer(a) => send_reply(&ctx.http, msg.channel_id, msg.id, &a.answer).await,
            Outcome::Notice(n) => send_text(&ctx.http, msg.channel_id, msg.id, &n).await,
            Outcome::Silent(_) | Outcome::Limited { .. } => Ok(()),
        };
        if let Err(e) = sent {
            tracing::warn!(error = %e, "discord: sending the reply failed");
        }
    }

    async fn interaction_create(&self, ctx: Context, interaction: Interaction) {
        let Interaction::Command(ci) = interaction else {
            return;
        };
        let chat = match self.me(&ctx.http).await {
            Some((_, chat)) => chat,
            None => Arc::new(self.chat.clone()),
        };
        let cmd = SlashCommand::from_interaction(&ci);
        let r = answer_command(&chat, &cmd, &self.console_url).await;
        if let Err(e) = ci.create_response(&ctx.http, r).await {
            tracing::warn!(error = %e, "discord: answering the interaction failed");
        }
    }
}

/// The REST client: `api_url` (`DISCORD_API_URL`) replaces `https://discord.com` in
/// every request URL. serenity 0.12 applies that override only with its own rate limiter
/// off (its rate limiter builds requests without it), so with an override the server
/// behind it (a rate-limiting proxy such as twilight-http-proxy, or a test fake) limits.
pub fn http_client(token: &str, api_url: Option<&str>) -> Http {
    let mut b = HttpBuilder::new(token);
    if let Some(url) = api_url {
        b = b
            .proxy(url.trim_end_matches('/'))
            .ratelimiter_disabled(true);
    }
    b.build()
}

/// The gateway intents the bot asks for.
pub fn intents() -> GatewayIntents {
    GatewayIntents::GUILD_MESSAGES
        | GatewayIntents::DIRECT_MESSAGES
        | GatewayIntents::MESSAGE_CONTENT
}

/// Connects to the gateway and answers until `shutdown` resolves.
pub async fn run_gateway(
    handler: Handler,
    token: String,
    api_url: Option<String>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), String> {
    let http = http_client(&token, api_url.as_deref());
    let mut client = serenity::all::ClientBuilder::new_with_http(http, intents())
        .event_handler(handler)
        .await
        .map_err(|e| format!("discord client: {e}"))?;
    let shards = Arc::clone(&client.shard_manager);
    tokio::select! {
        r = client.start() => r.map_err(|e| format!("discord gateway: {e}")),
        _ = shutdown => {
            shards.shutdown_all().await;
            Ok(())
        }
    }
}
