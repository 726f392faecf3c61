//! Long polling: `getUpdates` from the saved offset, each update handled in its own task
//! (a panic is counted and skipped), the offset saved after each, a clean stop.

use super::*;

/// A shutdown future that can be asked "has it fired?" more than once.
pub(super) struct Shutdown<F> {
    fut: Pin<Box<F>>,
    fired: bool,
}

impl<F: Future<Output = ()>> Shutdown<F> {
    pub(super) fn new(fut: F) -> Self {
        Shutdown {
            fut: Box::pin(fut),
            fired: false,
        }
    }

    pub(super) async fn fired(&mut self) -> bool {
        if !self.fired {
            let fut = &mut self.fut;
            self.fired =
                std::future::poll_fn(|cx| Poll::Ready(fut.as_mut().poll(cx).is_ready())).await;
        }
        self.fired
    }

    /// `f`, unless shutdown comes first (then None).
    pub(super) async fn race<T>(&mut self, f: impl Future<Output = T>) -> Option<T> {
        if self.fired {
            return None;
        }
        tokio::select! {
            _ = self.fut.as_mut() => {
                self.fired = true;
                None
            }
            v = f => Some(v),
        }
    }
}

/// Until it works or shutdown: a start-up call, with growing pauses between tries
/// (0.5 s doubling up to 30 s, or as long as flood control asks).
pub(super) async fn until_ok<T, F, Fut, S>(
    what: &str,
    stop: &mut Shutdown<S>,
    mut call: F,
) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, RequestError>>,
    S: Future<Output = ()>,
{
    let mut wait = FIRST_SETUP_WAIT;
    loop {
        match stop.race(call()).await? {
            Ok(v) => return Some(v),
            Err(e) => {
                let pause = match &e {
                    RequestError::RetryAfter(s) => s.duration().max(wait),
                    _ => wait,
                };
                tracing::error!(method = what, error = %e, wait_ms = pause.as_millis() as u64, "telegram start-up call failed; trying again");
                stop.race(tokio::time::sleep(pause)).await?;
                wait = (wait * 2).min(MAX_POLL_BACKOFF);
            }
        }
    }
}

/// Answers one update in a task of its own, so that a panic while handling it (a
/// malformed update tripping a library) is caught: logged, counted in
/// `gpu_advisor_updates_dropped_total{channel="telegram"}` and skipped. The caller goes
/// on with the next update either way.
pub(super) async fn answer_guarded(bot: &Bot, chat: &Chat, bot_id: UserId, update: Update) {
    let id = update.id.0;
    let (b, c) = (bot.clone(), chat.clone());
    guarded(
        chat,
        id,
        async move { answer_as(&b, &c, bot_id, update).await },
    )
    .await;
}

/// Runs `handling` (update `id`) in its own task; see [`answer_guarded`].
pub(super) async fn guarded<F>(chat: &Chat, id: u32, handling: F)
where
    F: Future<Output = Result<(), RequestError>> + Send + 'static,
{
    match tokio::spawn(handling).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!(error = %e, update = id, "telegram reply not delivered"),
        Err(e) if e.is_panic() => {
            tracing::error!(
                update = id,
                "telegram update handling panicked; update skipped"
            );
            chat.metrics.update_dropped(Channel::Telegram);
        }
        Err(e) => tracing::warn!(error = %e, update = id, "telegram update handling cancelled"),
    }
}

/// The offset persisted by an earlier run, if any.
pub(super) async fn stored_offset(chat: &Chat) -> Option<i32> {
    match chat.store.setting(OFFSET_KEY).await {
        Ok(v) => v.and_then(|s| s.trim().parse().ok()),
        Err(e) => {
            tracing::warn!(error = %e, "store unavailable: starting Telegram polling without a saved offset");
            None
        }
    }
}

/// The polling loop proper: `getUpdates` from the saved offset, every update handled in
/// order, the offset saved after each; stops at shutdown after the update in hand.
pub(super) async fn poll_loop<S: Future<Output = ()>>(
    chat: &Chat,
    bot: Bot,
    me: Me,
    stop: &mut Shutdown<S>,
) {
    let chat = chat.named(&me.0);
    if until_ok("deleteWebhook", stop, || bot.delete_webhook().send())
        .await
        .is_none()
    {
        return;
    }
    let mut offset = stored_offset(&chat).await;
    tracing::info!(bot = %me.0, ?offset, "telegram long polling started");
    let mut wait = FIRST_BACKOFF;
    loop {
        let mut req = bot
            .get_updates()
            .timeout(POLL_TIMEOUT_SECS)
            .allowed_updates(vec![AllowedUpdate::Message]);
        if let Some(o) = offset {
            req = req.offset(o);
        }
        let Some(res) = stop.race(req.send()).await else {
            break;
        };
        let updates = match res {
            Ok(u) => {
                wait = FIRST_BACKOFF;
                u
            }
            Err(e) => {
                let pause = match &e {
                    RequestError::RetryAfter(s) => s.duration(),
                    _ => wait,
                };
                tracing::warn!(error = %e, wait_ms = pause.as_millis() as u64, "telegram getUpdates failed");
                if stop.race(tokio::time::sleep(pause)).await.is_none() {
                    break;
                }
                wait = (wait * 2).min(MAX_POLL_BACKOFF);
                continue;
            }
        };
        for update in updates {
            let next = update.id.as_offset();
            if offset.is_some_and(|o| next <= o) {
                continue; // already handled (a server that ignored the offset)
            }
            answer_guarded(&bot, &chat, me.1, update).await;
            offset = Some(next);
            if let Err(e) = chat.store.set_setting(OFFSET_KEY, &next.to_string()).await {
                tracing::debug!(error = %e, "store unavailable: Telegram offset not saved");
            }
            if stop.fired().await {
                break;
            }
        }
        if stop.fired().await {
            break;
        }
    }
    tracing::info!("telegram long polling stopped");
}

/// `setMyCommands` until it works, except that an error Telegram will give again (the
/// menu refused) is logged and passed over: the bot works without a menu.
pub(super) async fn commands_or_give_up(bot: &Bot) -> Result<(), RequestError> {
    match register_commands(bot).await {
        Err(e) if retry_delay(&e, Duration::ZERO, Retry::Idempotent).is_none() => {
            tracing::warn!(error = %e, "cannot register the Telegram commands");
            Ok(())
        }
        r => r,
    }
}

/// Long polling until `shutdown`: builds the bot from the settings, `getMe` (then
/// `ready` is set), `setMyCommands`, `deleteWebhook`, then `getUpdates` in a loop (see
/// `poll_loop`). Start-up calls are tried until they work or shutdown.
pub async fn run_polling(
    chat: Chat,
    tg: config::Telegram,
    ready: Ready,
    shutdown: impl Future<Output = ()>,
) {
    let bot = match bot(&tg) {
        Ok(b) => b,
        Err(e) => {
            tracing::error!(error = %e, "telegram polling not started");
            return;
        }
    };
    let mut stop = Shutdown::new(shutdown);
    let Some(me) = until_ok("getMe", &mut stop, || get_me(&bot)).await else {
        return;
    };
    ready.set();
    if until_ok("setMyCommands", &mut stop, || commands_or_give_up(&bot))
        .await
        .is_none()
    {
        return;
    }
    poll_loop(&chat, bot, me, &mut stop).await;
}
