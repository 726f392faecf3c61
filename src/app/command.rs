//! The bot's commands, one typed enum for every platform: text commands (`/price a100`,
//! `/compare@bot 4090 a100`) are parsed once here; Discord's slash commands build the
//! enum from their typed options directly. A command becomes the question the core
//! answers; nothing here answers anything.

/// A command the bot has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `/start`, `/help`, or `/gpu` without a question.
    Help,
    /// `/gpu <question>`, `/ask <question>`.
    Ask(String),
    /// `/price [card]`, `/cards`.
    Price(Option<String>),
    /// `/faq [topic]`.
    Faq(Option<String>),
    /// `/compare a b [c…]`.
    Compare(Vec<String>),
    /// `/budget <amount>`.
    Budget(String),
    /// `/auto on|off`: Some(on), None for another argument.
    Auto(Option<bool>),
}

/// What a message's text is, as far as commands go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// Plain text: a question.
    Text,
    /// One of our commands.
    Command(Command),
    /// A command addressed to another bot (`/x@other_bot`), or one we do not have.
    NotOurs,
}

/// Parses `/cmd@bot args`. `bot_name` (lowercase, no `@`) may be empty when the
/// platform gives none; then `/cmd@anyone` is taken as ours.
pub fn parse(text: &str, bot_name: &str) -> Parsed {
    let Some(rest) = text.trim().strip_prefix('/') else {
        return Parsed::Text;
    };
    let (head, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let args = args.trim();
    let (cmd, target) = head.split_once('@').unwrap_or((head, ""));
    if !target.is_empty() && !bot_name.is_empty() && !target.eq_ignore_ascii_case(bot_name) {
        return Parsed::NotOurs;
    }
    let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
    let c = match cmd.to_ascii_lowercase().as_str() {
        "start" | "help" => Command::Help,
        "gpu" | "ask" if args.is_empty() => Command::Help,
        "gpu" | "ask" => Command::Ask(args.to_string()),
        "price" => Command::Price(some(args)),
        "cards" => Command::Price(None),
        "faq" => Command::Faq(some(args)),
        "compare" => Command::Compare(args.split_whitespace().map(str::to_string).collect()),
        "budget" => Command::Budget(args.to_string()),
        "auto" => Command::Auto(on_off(args)),
        _ => return Parsed::NotOurs,
    };
    Parsed::Command(c)
}

/// `on`/`off` and their Chinese forms; None for anything else.
pub fn on_off(arg: &str) -> Option<bool> {
    match arg.trim().to_lowercase().as_str() {
        "on" | "true" | "1" | "开" | "开启" | "打开" => Some(true),
        "off" | "false" | "0" | "关" | "关闭" => Some(false),
        _ => None,
    }
}

impl Command {
    /// The question the core answers for this command; None for `/auto`, which changes
    /// a setting instead.
    pub fn question(&self) -> Option<String> {
        Some(match self {
            Command::Help => "/help".to_string(),
            Command::Ask(q) => q.clone(),
            Command::Price(None) => "价格表".to_string(),
            Command::Price(Some(card)) => format!("{card} 多少钱"),
            Command::Faq(None) => "常见问题 FAQ".to_string(),
            Command::Faq(Some(topic)) => topic.replace('-', " "),
            Command::Compare(cards) if cards.len() >= 2 => cards.join(" vs "),
            Command::Compare(_) => "/help".to_string(),
            Command::Budget(amount) => format!("预算 {amount}"),
            Command::Auto(_) => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The question a text becomes: Some(question), or None when it is not ours.
    fn check(text: &str, bot: &str, expected: Option<&str>) {
        let got = match parse(text, bot) {
            Parsed::Text => Some(text.to_string()),
            Parsed::Command(c) => Some(c.question().unwrap_or_else(|| "<setting>".into())),
            Parsed::NotOurs => None,
        };
        assert_eq!(got.as_deref(), expected, "{text:?} to @{bot}");
    }

    #[test]
    fn commands_become_questions() {
        check("/price@gpu_bot a100", "gpu_bot", Some("a100 多少钱"));
        check("/price@other_bot a100", "gpu_bot", None);
        check("/gpu 4090 能跑 70B 吗", "gpu_bot", Some("4090 能跑 70B 吗"));
        check("/compare 4090 a100", "", Some("4090 vs a100"));
        check("/compare 4090", "", Some("/help"));
        check("/budget 3000", "", Some("预算 3000"));
        check("/start", "", Some("/help"));
        check("/cards", "", Some("价格表"));
        check("/faq nvlink-vs-pcie", "", Some("nvlink vs pcie"));
        check("/auto on", "", Some("<setting>"));
        check("hello", "", Some("hello"));
        check("/unknowncmd", "", None);
    }

    #[test]
    fn auto_reads_on_and_off() {
        assert_eq!(
            parse("/auto@gpu_bot 开启", "gpu_bot"),
            Parsed::Command(Command::Auto(Some(true)))
        );
        assert_eq!(
            parse("/auto off", ""),
            Parsed::Command(Command::Auto(Some(false)))
        );
        assert_eq!(
            parse("/auto maybe", ""),
            Parsed::Command(Command::Auto(None))
        );
    }
}
