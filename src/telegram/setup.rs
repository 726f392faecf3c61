//! Start-up calls: the command menu, `getMe`, `setWebhook`.

use super::*;

/// The command menu: (command, English description, Chinese description).
pub const COMMANDS: &[(&str, &str, &str)] = &[
    ("start", "What I can answer", "开始：我能回答什么"),
    ("help", "How to ask", "使用说明"),
    (
        "gpu",
        "<question> Ask about a workload, e.g. /gpu can a 4090 run 70B",
        "<问题> 问需求，如 /gpu 4090 能跑 70B 吗",
    ),
    ("price", "[card] Rental prices", "[卡型] 租用价格"),
    ("cards", "The cards we rent", "可租的显卡"),
    (
        "faq",
        "[topic] Frequently asked questions",
        "[主题] 常见问题",
    ),
    (
        "compare",
        "<a> <b> Compare two cards",
        "<卡A> <卡B> 对比两张卡",
    ),
    (
        "budget",
        "<amount> What a monthly budget rents",
        "<金额> 每月预算能租什么",
    ),
    (
        "auto",
        "on|off Answer clear GPU questions here without a mention (admins)",
        "on|off 本群明确的 GPU 问题无需 @ 也回答（管理员）",
    ),
];

/// `setMyCommands`: English as the default, Chinese for `zh` clients (one try each).
pub async fn register_commands(bot: &Bot) -> Result<(), RequestError> {
    let en: Vec<BotCommand> = COMMANDS
        .iter()
        .map(|(c, en, _)| BotCommand::new(*c, *en))
        .collect();
    let zh: Vec<BotCommand> = COMMANDS
        .iter()
        .map(|(c, _, zh)| BotCommand::new(*c, *zh))
        .collect();
    bot.set_my_commands(en).send().await?;
    bot.set_my_commands(zh).language_code("zh").send().await?;
    Ok(())
}

/// `getMe`: the bot's user name (lowercase) and id (one try).
pub async fn get_me(bot: &Bot) -> Result<Me, RequestError> {
    let me = bot.get_me().send().await?;
    Ok((me.username().to_lowercase(), me.user.id))
}

/// `setWebhook` (one try) with the secret Telegram sends back in
/// `X-Telegram-Bot-Api-Secret-Token`.
pub async fn set_webhook(
    bot: &Bot,
    url: &reqwest::Url,
    secret: &config::Secret,
) -> Result<(), RequestError> {
    bot.set_webhook(url.clone())
        .allowed_updates(vec![AllowedUpdate::Message])
        .secret_token(secret.expose())
        .send()
        .await
        .map(|_| ())
}
