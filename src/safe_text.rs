//! Text flotilla shows or logs but did not write itself (API errors, plugin output, URLs, fleet
//! data): [`redact`] hides credentials — URL userinfo, bearer and basic authorization, tokens,
//! passwords, JWTs and any value the caller knows to be secret — and [`printable`] escapes
//! control characters so data can never drive the terminal. Every message, JSON field and log
//! line that may carry such text goes through here. It must not decide what is shown.

const REDACTED: &str = "[redacted]";

/// Words after which a credential follows (matched without regard to case), with the
/// separator that may stand between them and the value.
const MARKERS: &[&str] = &[
    "bearer ",
    "basic ",
    "token=",
    "token:",
    "token\":\"",
    "token\": \"",
    "password=",
    "password:",
    "password\":\"",
    "password\": \"",
    "passwd=",
    "secret=",
    "secret:",
    "api-key=",
    "apikey=",
    "client-key-data:",
];

/// `text` with every credential it holds replaced by `[redacted]`, and every value of
/// `known` (a token, a plugin's output) wherever it appears.
pub fn redact_known(text: &str, known: &[&str]) -> String {
    let mut out = redact(text);
    for secret in known.iter().map(|s| s.trim()).filter(|s| s.len() >= 4) {
        out = out.replace(secret, REDACTED);
    }
    out
}

/// `text` with URL userinfo, authorization values, tokens, passwords and JWTs replaced by
/// `[redacted]`.
pub fn redact(text: &str) -> String {
    let text = redact_userinfo(text);
    let text = redact_markers(&text);
    redact_jwts(&text)
}

fn redact_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find("://") {
        let (head, tail) = rest.split_at(pos + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| c.is_whitespace() || matches!(c, '/' | '?' | '#' | '"' | '\'' | '>'))
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@') {
            Some(at) => {
                out.push_str(REDACTED);
                out.push_str(&authority[at..]);
            }
            None => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

fn redact_markers(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some((pos, marker)) = MARKERS
        .iter()
        .filter_map(|m| lower[at..].find(m).map(|p| (at + p, *m)))
        .min_by_key(|(p, _)| *p)
    {
        let value_start = pos + marker.len();
        let value = &text[value_start..];
        let skip = value.len() - value.trim_start_matches([' ', '"', '\'']).len();
        let value = &value[skip..];
        let end = value
            .find(|c: char| {
                c.is_whitespace() || matches!(c, '"' | '\'' | '&' | ',' | ';' | ')' | '}')
            })
            .unwrap_or(value.len());
        out.push_str(&text[at..value_start + skip]);
        if end > 0 {
            out.push_str(REDACTED);
        }
        at = value_start + skip + end;
    }
    out.push_str(&text[at..]);
    out
}

fn redact_jwts(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find("eyJ") {
        out.push_str(&rest[..pos]);
        let candidate = &rest[pos..];
        let end = candidate
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '=')))
            .unwrap_or(candidate.len());
        let token = candidate[..end].trim_end_matches('.');
        let end = token.len();
        if token.len() >= 20 && token.matches('.').count() >= 2 {
            out.push_str(REDACTED);
        } else {
            out.push_str(token);
        }
        rest = &candidate[end..];
    }
    out.push_str(rest);
    out
}

/// `text` with control characters (escape sequences, carriage returns, bells, C1 controls)
/// written as `\u{..}` escapes, so printing it cannot move the cursor, recolour or retitle the
/// terminal. Newlines and tabs stay when `keep_lines`.
pub fn printable(text: &str, keep_lines: bool) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_string();
    }
    text.chars()
        .map(|c| match c {
            '\n' | '\t' if keep_lines => c.to_string(),
            c if c.is_control() => c.escape_unicode().to_string(),
            c => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_in_urls_is_hidden_but_the_host_stays() {
        assert_eq!(
            redact("proxy http://alice:s3cret@proxy.corp:3128 refused"),
            "proxy http://[redacted]@proxy.corp:3128 refused"
        );
        assert_eq!(
            redact("GET https://u:p@10.0.0.1:6443/api?x=1"),
            "GET https://[redacted]@10.0.0.1:6443/api?x=1"
        );
        assert_eq!(redact("https://example.com/a@b"), "https://example.com/a@b");
    }

    #[test]
    fn authorization_tokens_and_passwords_are_hidden() {
        assert_eq!(
            redact("Authorization: Bearer abc.def-123 denied"),
            "Authorization: Bearer [redacted] denied"
        );
        assert_eq!(redact("a token=xyz&b=1"), "a token=[redacted]&b=1");
        assert_eq!(
            redact(r#"{"token":"s3cr3t","ok":1} password: hunter2"#),
            r#"{"token":"[redacted]","ok":1} password: [redacted]"#
        );
        assert_eq!(redact("PASSWORD=Hunter2 x"), "PASSWORD=[redacted] x");
    }

    #[test]
    fn jwts_and_known_values_are_hidden_wherever_they_stand() {
        let jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl";
        assert_eq!(redact(&format!("got {jwt}.")), "got [redacted].");
        assert_eq!(
            redact_known("plugin said: OTP-77aa91 expired", &["OTP-77aa91\n"]),
            "plugin said: [redacted] expired"
        );
        assert_eq!(redact("nothing here"), "nothing here");
    }

    #[test]
    fn control_characters_are_escaped_not_sent() {
        assert_eq!(
            printable("web\u{1b}]0;pwned\u{7}\r\n", false),
            "web\\u{1b}]0;pwned\\u{7}\\u{d}\\u{a}"
        );
        assert_eq!(printable("a\tb\nc\u{9b}", true), "a\tb\nc\\u{9b}");
        assert_eq!(printable("plain", false), "plain");
    }
}
