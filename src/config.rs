//! Settings, loaded in one place: defaults, then an optional TOML file (`--config`),
//! then the environment (CONTRACT.md §6). Secrets are wrapped so they never reach a log.

use serde::Deserialize;
use std::fmt;

/// A secret value: compared, never printed.
#[derive(Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Secret {
        Secret(s.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

#[derive(Debug, Clone)]
pub struct Wecom {
    pub token: Secret,
    pub encoding_aes_key: Secret,
    pub corp_id: String,
}

/// Everything `serve` needs to know.
#[derive(Debug, Clone)]
pub struct Settings {
    pub listen: String,
    pub api_tokens: Vec<Secret>,
    pub webhook_secrets: Vec<Secret>,
    pub ask_rate_per_min: Option<u32>,
    pub wecom: Option<Wecom>,
    pub wecom_robot_webhook_url: Option<String>,
    pub redis_url: Option<String>,
    pub unanswered_log: Option<String>,
    pub log_format: LogFormat,
    /// Where the console is reachable, for replies too long for a chat message.
    pub console_url: String,
    /// Bytes of a WeCom passive reply (WeCom's limit is 2048).
    pub wecom_passive_max_bytes: usize,
    pub telegram: Option<Telegram>,
    pub discord: Option<Discord>,
    /// Seconds between checks of catalog/ and intents/ for edits; 0 turns file watching
    /// off (SIGHUP still reloads).
    pub reload_poll_secs: u64,
    /// What one connection may hold of the server, and how many there may be.
    pub server: ServerLimits,
}

/// The HTTP server's limits. The defaults keep a 256 MiB pod alive under thousands of
/// slow or oversized clients (README, "Server limits").
#[derive(Debug, Clone, PartialEq)]
pub struct ServerLimits {
    /// A request's headers must arrive within this long; it also ends an idle keep-alive
    /// connection (the wait for the next request's headers is the same timer).
    pub header_timeout: std::time::Duration,
    /// A request's body must arrive within this long of the moment the server first
    /// waits for it.
    pub body_timeout: std::time::Duration,
    /// Bytes of a request's head (request line and headers) before 431.
    pub max_header_bytes: usize,
    /// Open connections at most; more wait in the listen backlog.
    pub max_connections: usize,
}

impl Default for ServerLimits {
    fn default() -> Self {
        ServerLimits {
            header_timeout: std::time::Duration::from_secs(10),
            body_timeout: std::time::Duration::from_secs(30),
            max_header_bytes: 16 * 1024,
            max_connections: 4096,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Telegram {
    /// `TELOXIDE_TOKEN`.
    pub token: Secret,
    /// `TELOXIDE_API_URL`: the Bot API base URL (tests point it at a local fake).
    pub api_url: Option<String>,
    /// `TELEGRAM_WEBHOOK_URL`: webhook mode instead of long polling.
    pub webhook_url: Option<String>,
    /// `TELEGRAM_WEBHOOK_SECRET`: checked against `X-Telegram-Bot-Api-Secret-Token`.
    pub webhook_secret: Option<Secret>,
}

#[derive(Debug, Clone, Default)]
pub struct Discord {
    /// `DISCORD_TOKEN`: gateway mode.
    pub token: Option<Secret>,
    /// `DISCORD_API_URL`: REST base URL override (tests).
    pub api_url: Option<String>,
    /// `DISCORD_PUBLIC_KEY`: hex Ed25519 key; enables `/discord/interactions`.
    pub public_key: Option<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            listen: "127.0.0.1:8080".into(),
            api_tokens: Vec::new(),
            webhook_secrets: Vec::new(),
            ask_rate_per_min: None,
            wecom: None,
            wecom_robot_webhook_url: None,
            redis_url: None,
            unanswered_log: None,
            log_format: LogFormat::Text,
            console_url: "http://127.0.0.1:8080/".into(),
            wecom_passive_max_bytes: 2048,
            telegram: None,
            discord: None,
            reload_poll_secs: 2,
            server: ServerLimits::default(),
        }
    }
}

/// The optional TOML file: every key optional, unknown keys rejected.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSettings {
    listen: Option<String>,
    api_tokens: Option<Vec<Secret>>,
    webhook_secrets: Option<Vec<Secret>>,
    ask_rate_per_min: Option<u32>,
    wecom_token: Option<Secret>,
    wecom_encoding_aes_key: Option<Secret>,
    wecom_corp_id: Option<String>,
    wecom_robot_webhook_url: Option<String>,
    redis_url: Option<String>,
    unanswered_log: Option<String>,
    log_format: Option<LogFormat>,
    console_url: Option<String>,
    wecom_passive_max_bytes: Option<usize>,
    reload_poll_secs: Option<u64>,
    header_timeout_secs: Option<u64>,
    body_timeout_secs: Option<u64>,
    max_header_bytes: Option<usize>,
    max_connections: Option<usize>,
}

/// Environment variables `Settings::load` reads (also checked against deploy/ files).
pub const ENV_VARS: &[&str] = &[
    "GPU_ADVISOR_LISTEN",
    "GPU_ADVISOR_API_TOKEN",
    "GPU_ADVISOR_WEBHOOK_SECRET",
    "GPU_ADVISOR_ASK_RATE_PER_MIN",
    "GPU_ADVISOR_UNANSWERED_LOG",
    "GPU_ADVISOR_LOG_FORMAT",
    "GPU_ADVISOR_CONSOLE_URL",
    "GPU_ADVISOR_RELOAD_POLL_SECS",
    "WECOM_TOKEN",
    "WECOM_ENCODING_AES_KEY",
    "WECOM_CORP_ID",
    "WECOM_ROBOT_WEBHOOK_URL",
    "REDIS_URL",
    "TELOXIDE_TOKEN",
    "TELOXIDE_API_URL",
    "TELEGRAM_WEBHOOK_URL",
    "TELEGRAM_WEBHOOK_SECRET",
    "DISCORD_TOKEN",
    "DISCORD_API_URL",
    "DISCORD_PUBLIC_KEY",
    "GPU_ADVISOR_HEADER_TIMEOUT_SECS",
    "GPU_ADVISOR_BODY_TIMEOUT_SECS",
    "GPU_ADVISOR_MAX_HEADER_BYTES",
    "GPU_ADVISOR_MAX_CONNECTIONS",
];

/// The number `name` from the environment (which wins), else the file, else `default`; it
/// must lie in `range`.
fn number<T>(
    env: &dyn Fn(&str) -> Option<String>,
    name: &str,
    file: Option<T>,
    default: T,
    range: std::ops::RangeInclusive<T>,
) -> Result<T, String>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy,
{
    let v = match env(name) {
        Some(v) => v
            .trim()
            .parse()
            .map_err(|_| format!("{name}: not a number: {v:?}"))?,
        None => file.unwrap_or(default),
    };
    if range.contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "{name}: {v} is outside {}..={}",
            range.start(),
            range.end()
        ))
    }
}

/// A comma-separated list of secrets; a list that is set but names none (`","`) is an
/// error, not open mode.
fn split_list(name: &str, v: &str) -> Result<Vec<Secret>, String> {
    let list: Vec<Secret> = v
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(Secret::new)
        .collect();
    if list.is_empty() {
        return Err(format!(
            "{name}: no value between the commas; unset it for no credentials"
        ));
    }
    Ok(list)
}

/// A list from the file: every entry non-empty, at least one.
fn file_list(name: &str, v: Option<Vec<Secret>>) -> Result<Option<Vec<Secret>>, String> {
    match v {
        Some(l) if l.is_empty() || l.iter().any(|s| s.expose().trim().is_empty()) => Err(format!(
            "config: {name}: empty entries; leave the key out for no credentials"
        )),
        other => Ok(other),
    }
}

/// Telegram's rule for a webhook secret token: 1–256 of `A-Z a-z 0-9 _ -`.
fn valid_webhook_secret(s: &str) -> bool {
    (1..=256).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl Settings {
    /// Defaults, then `file` (TOML text), then `env` (a lookup, so tests pass their own).
    pub fn load(
        file: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Settings, String> {
        let mut s = Settings::default();
        let f: FileSettings = match file {
            Some(text) => toml::from_str(text).map_err(|e| format!("config: {}", e.message()))?,
            None => FileSettings::default(),
        };
        let env_raw = env;
        let env = |k: &str| env(k).filter(|v| !v.trim().is_empty());
        s.listen = env("GPU_ADVISOR_LISTEN").or(f.listen).unwrap_or(s.listen);
        // Not `env` (which drops blank values): a list set to blanks is an error.
        let list = |name: &str, file: Option<Vec<Secret>>| match env_raw(name) {
            Some(v) if !v.trim().is_empty() => split_list(name, &v).map(Some),
            _ => file_list(name, file),
        };
        s.api_tokens = list("GPU_ADVISOR_API_TOKEN", f.api_tokens)?.unwrap_or_default();
        s.webhook_secrets =
            list("GPU_ADVISOR_WEBHOOK_SECRET", f.webhook_secrets)?.unwrap_or_default();
        s.ask_rate_per_min = match env("GPU_ADVISOR_ASK_RATE_PER_MIN") {
            Some(v) => Some(
                v.trim()
                    .parse()
                    .map_err(|_| format!("GPU_ADVISOR_ASK_RATE_PER_MIN: not a number: {v:?}"))?,
            ),
            None => f.ask_rate_per_min,
        }
        .filter(|n| *n > 0);
        let token = env("WECOM_TOKEN").map(Secret::new).or(f.wecom_token);
        let key = env("WECOM_ENCODING_AES_KEY")
            .map(Secret::new)
            .or(f.wecom_encoding_aes_key);
        let corp = env("WECOM_CORP_ID").or(f.wecom_corp_id);
        s.wecom = match (token, key, corp) {
            (Some(token), Some(encoding_aes_key), Some(corp_id)) => Some(Wecom {
                token,
                encoding_aes_key,
                corp_id,
            }),
            (None, None, None) => None,
            _ => {
                return Err(
                    "WeCom needs all of WECOM_TOKEN, WECOM_ENCODING_AES_KEY and WECOM_CORP_ID"
                        .into(),
                )
            }
        };
        s.wecom_robot_webhook_url = env("WECOM_ROBOT_WEBHOOK_URL").or(f.wecom_robot_webhook_url);
        s.redis_url = env("REDIS_URL").or(f.redis_url);
        s.unanswered_log = env("GPU_ADVISOR_UNANSWERED_LOG").or(f.unanswered_log);
        s.log_format = match env("GPU_ADVISOR_LOG_FORMAT").as_deref() {
            Some("json") => LogFormat::Json,
            Some("text") => LogFormat::Text,
            Some(other) => {
                return Err(format!(
                    "GPU_ADVISOR_LOG_FORMAT: text or json, not {other:?}"
                ))
            }
            None => f.log_format.unwrap_or_default(),
        };
        s.reload_poll_secs = number(
            &env,
            "GPU_ADVISOR_RELOAD_POLL_SECS",
            f.reload_poll_secs,
            s.reload_poll_secs,
            0..=u64::MAX,
        )?;
        s.wecom_passive_max_bytes = f
            .wecom_passive_max_bytes
            .unwrap_or(s.wecom_passive_max_bytes)
            .clamp(256, 2048);
        s.telegram = env("TELOXIDE_TOKEN").map(|t| Telegram {
            token: Secret::new(t),
            api_url: env("TELOXIDE_API_URL"),
            webhook_url: env("TELEGRAM_WEBHOOK_URL"),
            webhook_secret: env("TELEGRAM_WEBHOOK_SECRET").map(Secret::new),
        });
        if let Some(tg) = &s.telegram {
            match (&tg.webhook_url, &tg.webhook_secret) {
                (Some(_), None) => {
                    return Err(
                        "TELEGRAM_WEBHOOK_URL needs TELEGRAM_WEBHOOK_SECRET: without it \
                        anyone who finds the URL can post forged updates"
                            .into(),
                    )
                }
                (Some(_), Some(secret)) if !valid_webhook_secret(secret.expose()) => {
                    return Err(
                        "TELEGRAM_WEBHOOK_SECRET: 1 to 256 of A-Z, a-z, 0-9, _ and - \
                        (Telegram's rule)"
                            .into(),
                    )
                }
                _ => {}
            }
        }
        let discord = Discord {
            token: env("DISCORD_TOKEN").map(Secret::new),
            api_url: env("DISCORD_API_URL"),
            public_key: env("DISCORD_PUBLIC_KEY"),
        };
        s.discord = (discord.token.is_some() || discord.public_key.is_some()).then_some(discord);
        s.console_url = env("GPU_ADVISOR_CONSOLE_URL")
            .or(f.console_url)
            .unwrap_or_else(|| format!("http://{}/", s.listen));
        let d = ServerLimits::default();
        let secs = std::time::Duration::from_secs;
        s.server = ServerLimits {
            header_timeout: secs(number(
                &env,
                "GPU_ADVISOR_HEADER_TIMEOUT_SECS",
                f.header_timeout_secs,
                d.header_timeout.as_secs(),
                1..=600,
            )?),
            body_timeout: secs(number(
                &env,
                "GPU_ADVISOR_BODY_TIMEOUT_SECS",
                f.body_timeout_secs,
                d.body_timeout.as_secs(),
                1..=600,
            )?),
            // hyper reads at least 8 KiB; 1 MiB is far above any real client's headers.
            max_header_bytes: number(
                &env,
                "GPU_ADVISOR_MAX_HEADER_BYTES",
                f.max_header_bytes,
                d.max_header_bytes,
                8192..=1 << 20,
            )?,
            max_connections: number(
                &env,
                "GPU_ADVISOR_MAX_CONNECTIONS",
                f.max_connections,
                d.max_connections,
                1..=1_000_000,
            )?,
        };
        Ok(s)
    }

    /// `/v1/ask` has no authentication configured.
    pub fn ask_is_open(&self) -> bool {
        self.api_tokens.is_empty() && self.webhook_secrets.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn load(file: Option<&str>, env: &[(&str, &str)]) -> Result<Settings, String> {
        let map: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Settings::load(file, &|k| map.get(k).cloned())
    }

    #[test]
    fn defaults_then_file_then_env() {
        let s = load(None, &[]).unwrap();
        assert_eq!(s.listen, "127.0.0.1:8080");
        assert!(s.ask_is_open());
        let s = load(Some("listen = \"0.0.0.0:9000\"\nask_rate_per_min = 5"), &[]).unwrap();
        assert_eq!(
            (s.listen.as_str(), s.ask_rate_per_min),
            ("0.0.0.0:9000", Some(5))
        );
        let s = load(
            Some("listen = \"0.0.0.0:9000\""),
            &[("GPU_ADVISOR_LISTEN", "127.0.0.1:1")],
        )
        .unwrap();
        assert_eq!(s.listen, "127.0.0.1:1");
    }

    #[test]
    fn rotation_lists_and_secrets_stay_hidden() {
        let s = load(
            None,
            &[
                ("GPU_ADVISOR_API_TOKEN", "old, new"),
                ("GPU_ADVISOR_WEBHOOK_SECRET", "s1"),
            ],
        )
        .unwrap();
        assert_eq!(s.api_tokens, vec![Secret::new("old"), Secret::new("new")]);
        let shown = format!("{s:?}");
        assert!(!shown.contains("old") && !shown.contains("s1"), "{shown}");
    }

    #[test]
    fn bad_values_are_errors() {
        assert!(load(Some("nope = 1"), &[]).is_err());
        assert!(load(None, &[("GPU_ADVISOR_ASK_RATE_PER_MIN", "many")]).is_err());
        assert!(load(None, &[("WECOM_TOKEN", "t")]).is_err());
    }

    #[test]
    fn a_token_list_of_only_commas_is_an_error_not_open_mode() {
        for v in [",", " , ,", ",,"] {
            let e = load(None, &[("GPU_ADVISOR_API_TOKEN", v)]).unwrap_err();
            assert!(e.contains("GPU_ADVISOR_API_TOKEN"), "{e}");
            assert!(load(None, &[("GPU_ADVISOR_WEBHOOK_SECRET", v)]).is_err());
        }
        assert!(load(Some("api_tokens = [\"\"]"), &[]).is_err());
        assert!(load(Some("api_tokens = []"), &[]).is_err());
        assert!(load(Some("webhook_secrets = [\" \"]"), &[]).is_err());
        // Unset or blank: no credentials (loopback only), as before.
        assert!(load(None, &[("GPU_ADVISOR_API_TOKEN", "")])
            .unwrap()
            .ask_is_open());
        assert!(load(None, &[("GPU_ADVISOR_API_TOKEN", " ")])
            .unwrap()
            .ask_is_open());
        let s = load(None, &[("GPU_ADVISOR_API_TOKEN", ",a,")]).unwrap();
        assert_eq!(s.api_tokens, vec![Secret::new("a")]);
    }

    #[test]
    fn telegram_webhook_mode_needs_a_secret() {
        let base = [
            ("TELOXIDE_TOKEN", "1:x"),
            (
                "TELEGRAM_WEBHOOK_URL",
                "https://bot.example.test/telegram/webhook",
            ),
        ];
        let e = load(None, &base).unwrap_err();
        assert!(e.contains("TELEGRAM_WEBHOOK_SECRET"), "{e}");
        let with = |secret: &str| {
            let mut env = base.to_vec();
            env.push(("TELEGRAM_WEBHOOK_SECRET", secret));
            load(None, &env)
        };
        assert!(with("s3cret-Token_1").is_ok());
        assert!(with("not allowed!").is_err());
        assert!(with(&"x".repeat(257)).is_err());
        // Long polling needs none.
        assert!(load(None, &base[..1]).unwrap().telegram.is_some());
    }
}
