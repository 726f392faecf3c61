//! The slash commands: their definitions (choices from the catalog) and an invocation
//! as the typed `app::Command`, from the interaction's options.

use super::*;

/// The application commands (a JSON array for `PUT /applications/{id}/commands`), with
/// choices from the catalog: offers for `/price`, cards for `/compare`, FAQ topics for
/// `/faq` (at most 25 each).
pub fn command_definitions(catalog: &Catalog) -> serde_json::Value {
    let choice = |name: &str, value: &str| serde_json::json!({"name": cut(name, CHOICE_NAME_MAX), "value": value});
    let offers: Vec<_> = catalog
        .offers
        .iter()
        .take(MAX_CHOICES)
        .map(|o| choice(&o.name_en, &o.id))
        .collect();
    let cards: Vec<_> = catalog
        .gpus
        .iter()
        .take(MAX_CHOICES)
        .map(|g| choice(&g.name, &g.id))
        .collect();
    let topics: Vec<_> = catalog
        .topics
        .iter()
        .filter(|t| t.kind == TopicKind::Faq)
        .take(MAX_CHOICES)
        .map(|t| choice(&t.title_en, &t.id))
        .collect();
    let string_opt = |name: &str, desc: &str, desc_zh: &str, required: bool| {
        serde_json::json!({
            "type": 3, "name": name, "description": desc,
            "description_localizations": {"zh-CN": desc_zh},
            "required": required,
        })
    };
    let with_choices = |mut o: serde_json::Value, choices: &[serde_json::Value]| {
        o["choices"] = serde_json::Value::Array(choices.to_vec());
        o
    };
    serde_json::json!([
        {
            "name": "gpu", "type": 1,
            "description": "Ask which GPU fits a workload (model, task, budget...)",
            "description_localizations": {"zh-CN": "问哪种 GPU 适合你的任务（模型、训练/推理、预算…）"},
            "options": [string_opt("question", "Your question, e.g. 4090 能跑 70B 吗", "你的问题，例如：微调 Qwen-14B 要什么卡", true)],
        },
        {
            "name": "price", "type": 1,
            "description": "Monthly and annual price of a rentable configuration",
            "description_localizations": {"zh-CN": "查看某个配置的月付和年付价格"},
            "options": [with_choices(string_opt("card", "The configuration", "配置", true), &offers)],
        },
        {
            "name": "faq", "type": 1,
            "description": "Frequently asked questions about GPU rental",
            "description_localizations": {"zh-CN": "GPU 租用常见问题"},
            "options": [with_choices(string_opt("topic", "The topic", "主题", true), &topics)],
        },
        {
            "name": "compare", "type": 1,
            "description": "Compare two cards side by side",
            "description_localizations": {"zh-CN": "对比两张卡"},
            "options": [
                with_choices(string_opt("a", "First card", "第一张卡", true), &cards),
                with_choices(string_opt("b", "Second card", "第二张卡", true), &cards),
            ],
        },
        {
            "name": "auto", "type": 1,
            "description": "Answer clear GPU questions in this channel without a mention",
            "description_localizations": {"zh-CN": "本频道中明确的 GPU 问题无需 @ 也回答"},
            // Shown to members with Manage Server only; checked again on use.
            "default_member_permissions": "32",
            "dm_permission": false,
            "options": [with_choices(
                string_opt("enabled", "on or off", "开启或关闭", true),
                &[choice("on", "on"), choice("off", "off")],
            )],
        },
    ])
}

/// A slash command, from the interactions endpoint's JSON or the gateway's interaction.
#[derive(Debug, Clone, PartialEq)]
pub struct SlashCommand {
    pub interaction_id: String,
    pub name: String,
    /// Top-level options as (name, value).
    pub options: Vec<(String, String)>,
    /// The channel id (the guild id when there is no channel).
    pub chat: String,
    pub user: String,
    pub guild: bool,
    /// The invoking member has Administrator or Manage Server.
    pub admin: bool,
}

/// Discord permission bits (ADMINISTRATOR, MANAGE_GUILD) that may change chat settings.
pub(super) const SETTINGS_PERMISSIONS: u64 = 0x8 | 0x20;

impl SlashCommand {
    fn option(&self, name: &str) -> &str {
        self.options
            .iter()
            .find(|(n, _)| n == name)
            .map_or("", |(_, v)| v.trim())
    }

    /// The typed command from the options Discord delivers (no text to parse again),
    /// or None for a command we do not have.
    pub fn command(&self) -> Option<Command> {
        let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
        let one_word = |s: &str| s.split_whitespace().collect::<String>();
        Some(match self.name.as_str() {
            "gpu" | "ask" => match self.option("question") {
                "" => Command::Help,
                q => Command::Ask(q.to_string()),
            },
            "price" => Command::Price(some(self.option("card"))),
            "faq" => Command::Faq(some(self.option("topic"))),
            "compare" => Command::Compare(
                [self.option("a"), self.option("b")]
                    .into_iter()
                    .map(one_word)
                    .filter(|w| !w.is_empty())
                    .collect(),
            ),
            "help" => Command::Help,
            "auto" => Command::Auto(command::on_off(self.option("enabled"))),
            _ => return None,
        })
    }

    /// The neutral inbound message: a slash command always addresses the bot.
    pub fn inbound(&self) -> Option<Inbound> {
        let command = self.command()?;
        Some(Inbound {
            channel: Channel::Discord,
            chat: self.chat.clone(),
            user: self.user.clone(),
            message_id: self.interaction_id.clone(),
            // The question as the user wrote it, for the logs; the typed command decides.
            text: self
                .options
                .iter()
                .map(|(_, v)| v.as_str())
                .collect::<Vec<_>>()
                .join(" "),
            command: Some(command),
            group: self.guild,
            mentions_bot: true,
            replies_to_bot: false,
            admin: self.admin,
        })
    }

    /// From an interaction's JSON (type 2).
    pub fn from_json(v: &serde_json::Value) -> Option<SlashCommand> {
        let s = |v: &serde_json::Value| match v {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Number(n) => Some(n.to_string()),
            serde_json::Value::Bool(b) => Some(b.to_string()),
            _ => None,
        };
        let data = v.get("data")?;
        let options = data
            .get("options")
            .and_then(|o| o.as_array())
            .map(|opts| {
                opts.iter()
                    .filter_map(|o| Some((s(o.get("name")?)?, s(o.get("value")?)?)))
                    .collect()
            })
            .unwrap_or_default();
        let guild = v.get("guild_id").and_then(s);
        let chat = v
            .get("channel_id")
            .and_then(s)
            .or_else(|| v.pointer("/channel/id").and_then(s))
            .or_else(|| guild.clone())
            .unwrap_or_default();
        let user = v
            .pointer("/member/user/id")
            .and_then(s)
            .or_else(|| v.pointer("/user/id").and_then(s))
            .unwrap_or_default();
        Some(SlashCommand {
            interaction_id: v.get("id").and_then(s).unwrap_or_default(),
            name: s(data.get("name")?)?,
            options,
            chat,
            user,
            guild: guild.is_some(),
            admin: v
                .pointer("/member/permissions")
                .and_then(|p| p.as_str())
                .and_then(|p| p.parse::<u64>().ok())
                .is_some_and(|p| p & SETTINGS_PERMISSIONS != 0),
        })
    }

    /// From a gateway interaction.
    pub fn from_interaction(ci: &CommandInteraction) -> SlashCommand {
        let options = ci
            .data
            .options
            .iter()
            .filter_map(|o| {
                let v = match &o.value {
                    CommandDataOptionValue::String(s) => s.clone(),
                    CommandDataOptionValue::Integer(i) => i.to_string(),
                    CommandDataOptionValue::Number(n) => n.to_string(),
                    CommandDataOptionValue::Boolean(b) => b.to_string(),
                    _ => return None,
                };
                Some((o.name.clone(), v))
            })
            .collect();
        let user = ci.member.as_ref().map_or(ci.user.id, |m| m.user.id);
        SlashCommand {
            interaction_id: ci.id.to_string(),
            name: ci.data.name.clone(),
            options,
            chat: ci.channel_id.to_string(),
            user: user.to_string(),
            guild: ci.guild_id.is_some(),
            admin: ci
                .member
                .as_ref()
                .and_then(|m| m.permissions)
                .is_some_and(|p| p.bits() & SETTINGS_PERMISSIONS != 0),
        }
    }
}
