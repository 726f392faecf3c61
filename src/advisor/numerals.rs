//! Numbers as people write them in chat: `3,000`, `1.5万`, `3k`, `三千五`, `一万二`,
//! `七百亿`, `千亿`, `1000 亿`, `两张`. Pure functions, no allocation on the hot path
//! beyond what the caller holds.

/// The regular-expression fragment that the slot patterns in `intents/` call `{NUM}`:
/// an Arabic number (optionally with thousands separators, a decimal part and a unit
/// suffix) or a run of Chinese numeral characters.
pub const NUM_PATTERN: &str = r"(?:(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?(?:[kKwWmMtT]|个[wW]|\s*(?:万亿|万|千|百|亿)|\s*(?:thousand|grand)(?-u:\b))?|[零〇一二两三四五六七八九十百千][零〇一二两三四五六七八九十百千万亿]*(?:[kK](?-u:\b))?|one|two|three|four|five|six|seven|eight|nine|ten|twelve|sixteen|thirty-two)";

/// English number words people use for counts ("two 3090s", "eight cards").
const WORDS: &[(&str, f64)] = &[
    ("one", 1.0),
    ("two", 2.0),
    ("three", 3.0),
    ("four", 4.0),
    ("five", 5.0),
    ("six", 6.0),
    ("seven", 7.0),
    ("eight", 8.0),
    ("nine", 9.0),
    ("ten", 10.0),
    ("twelve", 12.0),
    ("sixteen", 16.0),
    ("thirty-two", 32.0),
];

pub(crate) fn cn_digit(c: char) -> Option<u32> {
    Some(match c {
        '零' | '〇' => 0,
        '一' => 1,
        '二' | '两' => 2,
        '三' => 3,
        '四' => 4,
        '五' => 5,
        '六' => 6,
        '七' => 7,
        '八' => 8,
        '九' => 9,
        _ => return None,
    })
}

fn cn_unit(c: char) -> Option<f64> {
    Some(match c {
        '十' => 10.0,
        '百' => 100.0,
        '千' => 1_000.0,
        '万' => 10_000.0,
        '亿' => 100_000_000.0,
        _ => return None,
    })
}

/// Parses a run of Chinese numerals, including the colloquial forms where the last
/// digit stands for the next lower unit (`三千五` = 3500, `一万二` = 12000).
pub fn parse_chinese(s: &str) -> Option<f64> {
    let mut total = 0.0; // everything already closed by 万 or 亿
    let mut section = 0.0; // the part below the current 万/亿
    let mut num: Option<f64> = None; // a digit waiting for its unit
    let mut last_unit = 1.0;
    let mut seen = false;
    for c in s.chars() {
        if c.is_whitespace() {
            continue;
        }
        if let Some(d) = cn_digit(c) {
            num = Some(d as f64);
        } else if let Some(u) = cn_unit(c) {
            if u >= 10_000.0 {
                section += num.take().unwrap_or(0.0);
                if section == 0.0 && total == 0.0 {
                    section = 1.0; // bare 万 / 亿
                }
                total = (total + section) * u;
                section = 0.0;
            } else {
                section += num.take().unwrap_or(1.0) * u;
            }
            last_unit = u;
        } else {
            return None;
        }
        seen = true;
    }
    if !seen {
        return None;
    }
    // A digit right after a unit counts in the next lower unit (`三千五` = 3500), but
    // not after 零 (`一百零五` = 105).
    let tail = match num {
        Some(d) if last_unit >= 10.0 && ends_digit_after_unit(s) => d * last_unit / 10.0,
        Some(d) => d,
        None => 0.0,
    };
    Some(total + section + tail)
}

fn ends_digit_after_unit(s: &str) -> bool {
    let cs: Vec<char> = s.chars().filter(|c| !c.is_whitespace()).collect();
    cs.len() >= 2 && cn_digit(cs[cs.len() - 1]).is_some() && cn_unit(cs[cs.len() - 2]).is_some()
}

/// Parses a number as matched by [`NUM_PATTERN`]. `k_binary` makes `k` mean 1024 (token
/// counts such as `8k` context) instead of 1000 (money, users). `m` is a million
/// (`2^20` when `k_binary`), `t` a trillion, `w`/`万` ten thousand, `亿` 10^8.
pub fn parse_number(s: &str, k_binary: bool) -> Option<f64> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    if let Some((_, v)) = WORDS.iter().find(|(w, _)| s.eq_ignore_ascii_case(w)) {
        return Some(*v);
    }
    let first = s.chars().next()?;
    if !first.is_ascii_digit() {
        // "三十二K", "八k": a Chinese number with the k of a token count.
        if let Some(head) = s.strip_suffix(['k', 'K']) {
            let k = if k_binary { 1024.0 } else { 1_000.0 };
            return parse_chinese(head).map(|v| v * k);
        }
        return parse_chinese(s);
    }
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == ',' || c == '.'))
        .unwrap_or(s.len());
    let digits: String = s[..end].chars().filter(|c| *c != ',').collect();
    let base: f64 = digits.parse().ok()?;
    // "1.5个w": colloquial for 1.5w.
    let rest = s[end..].trim_start().trim_start_matches('个');
    let mult = match rest.chars().next() {
        Some('t') if rest.starts_with("thousand") => 1_000.0,
        // "2 grand": colloquial English for two thousand.
        Some('g') if rest.starts_with("grand") => 1_000.0,
        None => 1.0,
        Some('k' | 'K') => {
            if k_binary {
                1024.0
            } else {
                1_000.0
            }
        }
        Some('m' | 'M') => {
            if k_binary {
                1_048_576.0
            } else {
                1_000_000.0
            }
        }
        Some('t' | 'T') => 1e12,
        // "1.2 万亿": a trillion.
        Some('万') if rest.starts_with("万亿") => 1e12,
        Some('w' | 'W' | '万') => 10_000.0,
        Some('千') => 1_000.0,
        Some('百') => 100.0,
        Some('亿') => 1e8,
        Some(_) => 1.0,
    };
    let v = base * mult;
    v.is_finite().then_some(v)
}

/// The lower bound of a range whose upper bound is `hi` ("五六千": 五 of 六千 is 5000;
/// "3-5k": 3k; "2000-3000": 2000): `lo` takes `hi`'s unit when it has none of its own.
/// None when the bound is not below `hi` (not a range).
pub fn range_low(lo: &str, hi: &str, k_binary: bool) -> Option<f64> {
    let lo = lo.trim();
    let digits = |c: char| c.is_ascii_digit() || c == '.' || c == ',' || cn_digit(c).is_some();
    let unit = hi.trim().trim_start_matches(digits);
    let bare = lo.chars().all(digits);
    let v = if bare && !unit.is_empty() {
        parse_number(&format!("{lo}{unit}"), k_binary)?
    } else {
        parse_number(lo, k_binary)?
    };
    let hi = parse_number(hi, k_binary)?;
    (v < hi).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, k_binary: bool, expected: f64) {
        let got = parse_number(input, k_binary);
        assert_eq!(got, Some(expected), "{input:?}");
    }

    #[test]
    fn chinese_numerals() {
        for (s, v) in [
            ("三千五", 3500.0),
            ("两万", 20000.0),
            ("一万二", 12000.0),
            ("七百亿", 7e10),
            ("千亿", 1e11),
            ("三百亿", 3e10),
            ("五千", 5000.0),
            ("十", 10.0),
            ("十二", 12.0),
            ("二十五", 25.0),
            ("一百零五", 105.0),
            ("一百五", 150.0),
            ("两", 2.0),
            ("四", 4.0),
            ("一万", 10000.0),
            ("六千", 6000.0),
            ("八", 8.0),
            ("一千亿", 1e11),
            ("两万五", 25000.0),
        ] {
            check(s, false, v);
        }
    }

    #[test]
    fn arabic_with_units() {
        check("3,000", false, 3000.0);
        check("1.5万", false, 15000.0);
        check("1.5w", false, 15000.0);
        check("1.5个w", false, 15000.0);
        check("3k", false, 3000.0);
        check("8k", true, 8192.0);
        check("32k", true, 32768.0);
        check("1000 亿", false, 1e11);
        check("50 亿", false, 5e9);
        check("1.2 万亿", false, 1.2e12);
        check("1.2万亿", false, 1.2e12);
        check("1T", false, 1e12);
        check("2800", false, 2800.0);
        check("三十二K", true, 32768.0);
        check("八k", true, 8192.0);
        check("五k", false, 5000.0);
        check("1.5", false, 1.5);
    }

    #[test]
    fn a_range_reads_its_low_end_in_the_high_end_unit() {
        assert_eq!(range_low("五", "六千", false), Some(5000.0));
        assert_eq!(range_low("3", "5k", false), Some(3000.0));
        assert_eq!(range_low("3", "4万", false), Some(30000.0));
        assert_eq!(range_low("2000", "3000", false), Some(2000.0));
        assert_eq!(range_low("2", "3 thousand", false), Some(2000.0));
        assert_eq!(range_low("七", "八十", false), Some(70.0));
        assert_eq!(range_low("5", "3", false), None);
        check("3 thousand", false, 3000.0);
        check("2 grand", false, 2000.0);
    }

    #[test]
    fn garbage_is_none() {
        assert_eq!(parse_number("", false), None);
        assert_eq!(parse_number("abc", false), None);
        assert_eq!(parse_chinese("三x"), None);
    }

    #[test]
    fn pattern_matches_what_parse_reads() {
        let re = regex::Regex::new(&format!("^{NUM_PATTERN}$")).unwrap();
        for s in [
            "三千五",
            "1.5万",
            "1.2 万亿",
            "3k",
            "3,000",
            "七百亿",
            "1000 亿",
            "8k",
            "三十二k",
        ] {
            assert!(re.is_match(s), "{s}");
        }
        // A comma between two numbers is not a thousands separator.
        let any = regex::Regex::new(NUM_PATTERN).unwrap();
        for (text, first) in [
            ("32768,3090", "32768"),
            ("1,500,000", "1,500,000"),
            ("8,16", "8"),
        ] {
            assert_eq!(any.find(text).map(|m| m.as_str()), Some(first), "{text}");
        }
    }
}
