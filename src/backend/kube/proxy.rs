//! Which proxy a cluster's API server is reached through, decided as kubectl (client-go)
//! decides it: the cluster's `proxy-url` in the kubeconfig wins (http, https or socks5, used
//! for every request; `NO_PROXY` does not apply to it); otherwise Go's
//! `http.ProxyFromEnvironment`: `HTTPS_PROXY` for an https server and `HTTP_PROXY` for an http
//! one (each upper case before lower case), never for `localhost` or a loopback address, and
//! not for a server that `NO_PROXY` names (a host, a domain suffix, `*`, an IP or a CIDR, each
//! with an optional port). Also the error that names the proxy when a proxied connection fails.
//! It only decides and names: it must not connect anywhere, and nothing it returns or shows may
//! carry a proxy's userinfo.

use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::Uri;
use tower::{BoxError, Layer, Service};

/// The proxy settings of the environment, as Go reads them (the first non-empty of each pair).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProxyEnv {
    /// `HTTPS_PROXY` or `https_proxy`, with the name it was read from.
    https: Option<(&'static str, String)>,
    /// `HTTP_PROXY` or `http_proxy`, with the name it was read from.
    http: Option<(&'static str, String)>,
    /// `NO_PROXY` or `no_proxy`.
    no_proxy: String,
    /// `REQUEST_METHOD` is set: Go refuses `HTTP_PROXY` there (a CGI request can set it).
    cgi: bool,
}

impl ProxyEnv {
    /// The process's environment.
    pub fn from_process() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// The environment `lookup` describes (a variable it returns `None` for is unset).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let first = |names: [&'static str; 2]| {
            names
                .into_iter()
                .find_map(|name| lookup(name).filter(|v| !v.is_empty()).map(|v| (name, v)))
        };
        ProxyEnv {
            https: first(["HTTPS_PROXY", "https_proxy"]),
            http: first(["HTTP_PROXY", "http_proxy"]),
            no_proxy: first(["NO_PROXY", "no_proxy"])
                .map(|(_, v)| v)
                .unwrap_or_default(),
            cgi: lookup("REQUEST_METHOD").is_some_and(|v| !v.is_empty()),
        }
    }
}

/// A proxy to reach one API server through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proxy {
    /// As kube-rs takes it: `http`, `https` or `socks5`, with an explicit port (Go's defaults:
    /// 80, 443, 1080) and the userinfo, if any, for the proxy's own authentication.
    pub url: Uri,
    /// Where it came from, as messages say it: `proxy-url` or the variable's name.
    pub from: &'static str,
}

impl Proxy {
    /// `scheme://host:port`, never the userinfo: how messages name the proxy.
    pub fn shown(&self) -> String {
        let host = self.url.host().unwrap_or_default();
        match (self.url.scheme_str(), self.url.port_u16()) {
            (Some(scheme), Some(port)) => format!("{scheme}://{host}:{port}"),
            (Some(scheme), None) => format!("{scheme}://{host}"),
            _ => host.to_string(),
        }
    }
}

/// A proxy setting kubectl would not use either; each says where the setting came from and
/// never its userinfo.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProxyError {
    #[error("{from} is not a proxy URL ({reason})")]
    Invalid { from: &'static str, reason: String },
    #[error("{from} names a {scheme}:// proxy; kubectl's proxies are http, https or socks5")]
    Scheme { from: &'static str, scheme: String },
    #[error(
        "HTTP_PROXY is refused while REQUEST_METHOD is set (a CGI environment), as kubectl refuses it"
    )]
    Cgi,
}

/// The proxy for the API server at `server`: the cluster's `proxy-url` when it has one, else
/// the environment's as Go's `http.ProxyFromEnvironment` picks it; `None` to connect directly.
pub fn proxy_for(
    server: &Uri,
    proxy_url: Option<&str>,
    env: &ProxyEnv,
) -> Result<Option<Proxy>, ProxyError> {
    if let Some(url) = proxy_url.filter(|url| !url.is_empty()) {
        return kubeconfig_proxy(url).map(Some);
    }
    let (name, value) = match server.scheme_str() {
        Some("https") => match &env.https {
            Some(set) => set,
            None => return Ok(None),
        },
        Some("http") => match &env.http {
            Some(_) if env.cgi => return Err(ProxyError::Cgi),
            Some(set) => set,
            None => return Ok(None),
        },
        _ => return Ok(None),
    };
    let Some(host) = server.host() else {
        return Ok(None);
    };
    let port = server
        .port_u16()
        .unwrap_or(if server.scheme_str() == Some("https") {
            443
        } else {
            80
        });
    if !NoProxy::parse(&env.no_proxy).uses_proxy(host, port) {
        return Ok(None);
    }
    env_proxy(name, value).map(Some)
}

/// The cluster's `proxy-url`, which client-go takes as it is when its scheme is http, https
/// or socks5.
fn kubeconfig_proxy(url: &str) -> Result<Proxy, ProxyError> {
    const FROM: &str = "the cluster's proxy-url";
    let parsed: Uri = url
        .parse()
        .map_err(|err: http::uri::InvalidUri| ProxyError::Invalid {
            from: FROM,
            reason: err.to_string(),
        })?;
    match parsed.scheme_str() {
        Some("http" | "https" | "socks5") => with_port(parsed, FROM),
        Some(other) => Err(ProxyError::Scheme {
            from: FROM,
            scheme: other.to_string(),
        }),
        None => Err(ProxyError::Invalid {
            from: FROM,
            reason: "it has no scheme".into(),
        }),
    }
}

/// A proxy variable's value as Go parses it: a URL with scheme http, https, socks5 or
/// socks5h, or else the value with `http://` before it (`proxy.corp:3128`).
fn env_proxy(name: &'static str, value: &str) -> Result<Proxy, ProxyError> {
    let known = |uri: &Uri| {
        matches!(
            uri.scheme_str(),
            Some("http" | "https" | "socks5" | "socks5h")
        ) && uri.host().is_some()
    };
    let parsed = match value.parse::<Uri>() {
        Ok(uri) if known(&uri) => uri,
        first => match format!("http://{value}").parse::<Uri>() {
            Ok(uri) if uri.host().is_some() => uri,
            _ => {
                return Err(ProxyError::Invalid {
                    from: name,
                    reason: match first {
                        Err(err) => err.to_string(),
                        Ok(_) => "it names no host".into(),
                    },
                });
            }
        },
    };
    with_port(parsed, name)
}

/// The proxy with an explicit port (Go's defaults: http 80, https 443, socks5 1080), and
/// `socks5h` said as `socks5` (kube-rs's SOCKS5 connector lets the proxy resolve names, which
/// is what both mean to Go).
fn with_port(uri: Uri, from: &'static str) -> Result<Proxy, ProxyError> {
    let invalid = |reason: String| ProxyError::Invalid { from, reason };
    let scheme = match uri.scheme_str() {
        Some("socks5h") => "socks5",
        Some(scheme) => scheme,
        None => return Err(invalid("it has no scheme".into())),
    };
    let authority = uri
        .authority()
        .ok_or_else(|| invalid("it names no host".into()))?
        .as_str();
    let with_port = if uri.port().is_some() {
        authority.to_string()
    } else {
        let port = match scheme {
            "https" => 443,
            "socks5" => 1080,
            _ => 80,
        };
        format!("{authority}:{port}")
    };
    let path = uri.path_and_query().map_or("", |p| p.as_str());
    let url = format!("{scheme}://{with_port}{path}")
        .parse()
        .map_err(|err: http::uri::InvalidUri| invalid(err.to_string()))?;
    Ok(Proxy { url, from })
}

/// `NO_PROXY` as Go's `httpproxy` reads it.
#[derive(Debug, Default, PartialEq, Eq)]
struct NoProxy {
    /// `*`: no server goes through the environment's proxy.
    all: bool,
    ips: Vec<IpRule>,
    domains: Vec<DomainRule>,
}

#[derive(Debug, PartialEq, Eq)]
enum IpRule {
    /// An address, with the port it applies to (`""`: every port).
    Ip(IpAddr, String),
    /// A network: every address in it, whatever the port.
    Cidr(IpAddr, u8),
}

/// `.example.com`: the suffix a host must end with; `exact_too`: `example.com` itself matches
/// as well (an entry without the leading dot or `*.`).
#[derive(Debug, PartialEq, Eq)]
struct DomainRule {
    suffix: String,
    exact_too: bool,
    port: String,
}

impl NoProxy {
    fn parse(text: &str) -> NoProxy {
        let mut rules = NoProxy::default();
        for entry in text.split(',') {
            let entry = entry.trim().to_ascii_lowercase();
            if entry.is_empty() {
                continue;
            }
            if entry == "*" {
                return NoProxy {
                    all: true,
                    ..NoProxy::default()
                };
            }
            if let Some(cidr) = parse_cidr(&entry) {
                rules.ips.push(cidr);
                continue;
            }
            let (host, port) = match split_host_port(&entry) {
                Some(("", _)) => continue,
                Some((host, port)) => (host, port),
                None => (entry.as_str(), ""),
            };
            if let Some(ip) = parse_ip(host) {
                rules.ips.push(IpRule::Ip(ip, port.to_string()));
                continue;
            }
            let host = host
                .strip_prefix('*')
                .filter(|h| h.starts_with('.'))
                .unwrap_or(host);
            let (suffix, exact_too) = match host.strip_prefix('.') {
                Some(_) => (host.to_string(), false),
                None => (format!(".{host}"), true),
            };
            rules.domains.push(DomainRule {
                suffix,
                exact_too,
                port: port.to_string(),
            });
        }
        rules
    }

    /// Whether a server at `host:port` goes through the environment's proxy (Go's `useProxy`).
    fn uses_proxy(&self, host: &str, port: u16) -> bool {
        let host = host.trim().to_ascii_lowercase();
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(&host);
        if host == "localhost" {
            return false;
        }
        let ip = parse_ip(host);
        if ip.is_some_and(|ip| ip.is_loopback()) {
            return false;
        }
        if self.all {
            return false;
        }
        let port = port.to_string();
        let port_matches = |wanted: &str| wanted.is_empty() || wanted == port;
        if let Some(ip) = ip {
            for rule in &self.ips {
                let matched = match rule {
                    IpRule::Ip(wanted, wanted_port) => *wanted == ip && port_matches(wanted_port),
                    IpRule::Cidr(network, bits) => in_network(ip, *network, *bits),
                };
                if matched {
                    return false;
                }
            }
        }
        !self.domains.iter().any(|rule| {
            (host.ends_with(&rule.suffix) || (rule.exact_too && host == &rule.suffix[1..]))
                && port_matches(&rule.port)
        })
    }
}

/// An IP address, IPv4-mapped IPv6 ones as IPv4 (Go compares them so).
fn parse_ip(text: &str) -> Option<IpAddr> {
    match text.parse::<IpAddr>().ok()? {
        IpAddr::V6(v6) => Some(v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4)),
        v4 => Some(v4),
    }
}

/// `10.0.0.0/8` or `fd00::/8` (Go's `net.ParseCIDR`).
fn parse_cidr(text: &str) -> Option<IpRule> {
    let (ip, bits) = text.split_once('/')?;
    let ip: IpAddr = ip.parse().ok()?;
    let bits: u8 = bits.parse().ok()?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    (bits <= max).then_some(IpRule::Cidr(ip, bits))
}

fn in_network(ip: IpAddr, network: IpAddr, bits: u8) -> bool {
    let (ip, network, width) = match (ip, network) {
        (IpAddr::V4(ip), IpAddr::V4(net)) => {
            (u128::from(u32::from(ip)), u128::from(u32::from(net)), 32u32)
        }
        (IpAddr::V6(ip), IpAddr::V6(net)) => (u128::from(ip), u128::from(net), 128),
        _ => return false,
    };
    let shift = width - u32::from(bits);
    shift >= width || (ip >> shift) == (network >> shift)
}

/// Go's `net.SplitHostPort`: `host:port` or `[v6]:port`; `None` when there is no port or the
/// host has colons outside brackets.
fn split_host_port(text: &str) -> Option<(&str, &str)> {
    if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = after.strip_prefix(':')?;
        return Some((host, port));
    }
    let (host, port) = text.rsplit_once(':')?;
    (!host.contains(':')).then_some((host, port))
}

/// A connection through a proxy that failed: the failure, with the proxy named (never its
/// userinfo) so the operator knows which hop to look at.
#[derive(Debug, thiserror::Error)]
#[error("via proxy {proxy} ({from}): {source}")]
pub struct ThroughProxy {
    proxy: Arc<str>,
    from: &'static str,
    #[source]
    source: BoxError,
}

/// Wraps a proxied client's transport failures in [`ThroughProxy`]; the errors kube-rs's own
/// layers raise (credentials, for one) and every answer pass unchanged.
#[derive(Debug, Clone)]
pub struct NameProxy {
    proxy: Arc<str>,
    from: &'static str,
}

impl NameProxy {
    pub fn new(proxy: &Proxy) -> Self {
        NameProxy {
            proxy: proxy.shown().into(),
            from: proxy.from,
        }
    }
}

impl<S> Layer<S> for NameProxy {
    type Service = NameProxyService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        NameProxyService {
            inner,
            name: self.clone(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct NameProxyService<S> {
    inner: S,
    name: NameProxy,
}

impl<S, Request> Service<Request> for NameProxyService<S>
where
    S: Service<Request>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let answer = self.inner.call(request);
        let name = self.name.clone();
        Box::pin(async move {
            answer.await.map_err(|err| {
                let err: BoxError = err.into();
                if err.is::<kube::Error>() {
                    return err;
                }
                Box::new(ThroughProxy {
                    proxy: name.proxy,
                    from: name.from,
                    source: err,
                }) as BoxError
            })
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> ProxyEnv {
        ProxyEnv::from_lookup(|name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        })
    }

    /// The proxy `vars` give a server at `server` (no proxy-url), shown.
    fn through(server: &str, vars: &[(&str, &str)]) -> Option<String> {
        proxy_for(&server.parse().unwrap(), None, &env(vars))
            .unwrap()
            .map(|proxy| proxy.url.to_string())
    }

    const PROXY: (&str, &str) = ("HTTPS_PROXY", "http://proxy.corp:3128");

    #[test]
    fn the_kubeconfigs_proxy_url_wins_over_the_environment_and_no_proxy() {
        let vars = env(&[PROXY, ("NO_PROXY", "*")]);
        let server = "https://api.example.com:6443".parse().unwrap();
        let proxy = proxy_for(&server, Some("socks5://jump.corp"), &vars)
            .unwrap()
            .unwrap();
        assert_eq!(proxy.url.to_string(), "socks5://jump.corp:1080/");
        assert_eq!(proxy.from, "the cluster's proxy-url");
        // Even a loopback server goes through a proxy-url, as it does in kubectl.
        let local = "https://127.0.0.1:6443".parse().unwrap();
        assert!(
            proxy_for(&local, Some("http://127.0.0.1:8080"), &vars)
                .unwrap()
                .is_some()
        );
        // An empty proxy-url is no proxy-url.
        assert_eq!(
            proxy_for(&server, Some(""), &env(&[PROXY]))
                .unwrap()
                .unwrap()
                .from,
            "HTTPS_PROXY"
        );
    }

    #[test]
    fn a_proxy_url_kubectl_refuses_is_an_error_that_never_shows_the_password() {
        let server: Uri = "https://api.example.com".parse().unwrap();
        for (url, expected) in [
            ("ftp://u:s3cret@proxy.corp", "names a ftp:// proxy"),
            ("socks5h://u:s3cret@proxy.corp", "names a socks5h:// proxy"),
            ("proxy.corp:3128", "has no scheme"),
            ("http://u:s3cret@proxy corp", "not a proxy URL"),
        ] {
            let err = proxy_for(&server, Some(url), &ProxyEnv::default()).unwrap_err();
            let text = err.to_string();
            assert!(text.contains(expected), "{url}: {text}");
            assert!(text.contains("proxy-url"), "{text}");
            assert!(!text.contains("s3cret"), "{text}");
        }
    }

    #[test]
    fn https_servers_use_https_proxy_and_http_servers_http_proxy_upper_case_first() {
        let both = [
            ("HTTPS_PROXY", "http://upper:1"),
            ("https_proxy", "http://lower:2"),
            ("http_proxy", "http://plain:3"),
        ];
        assert_eq!(
            through("https://api.example.com", &both).as_deref(),
            Some("http://upper:1/")
        );
        assert_eq!(
            through("https://api.example.com", &both[1..]).as_deref(),
            Some("http://lower:2/")
        );
        assert_eq!(
            through("http://api.example.com", &both).as_deref(),
            Some("http://plain:3/")
        );
        // HTTPS_PROXY is not for http servers, nor HTTP_PROXY for https ones.
        assert_eq!(through("http://api.example.com", &both[..2]), None);
        assert_eq!(through("https://api.example.com", &both[2..]), None);
        // An empty upper-case variable gives way to the lower-case one, as in Go.
        assert_eq!(
            through(
                "https://api.example.com",
                &[("HTTPS_PROXY", ""), ("https_proxy", "http://lower:2")]
            )
            .as_deref(),
            Some("http://lower:2/")
        );
        assert_eq!(through("https://api.example.com", &[]), None);
    }

    #[test]
    fn an_environment_proxy_without_scheme_is_http_and_gets_its_default_port() {
        for (value, expected) in [
            ("proxy.corp:3128", "http://proxy.corp:3128/"),
            ("127.0.0.2:3128", "http://127.0.0.2:3128/"),
            ("http://proxy.corp", "http://proxy.corp:80/"),
            ("https://proxy.corp", "https://proxy.corp:443/"),
            ("socks5h://proxy.corp", "socks5://proxy.corp:1080/"),
            ("http://u:p@proxy.corp:3128", "http://u:p@proxy.corp:3128/"),
        ] {
            assert_eq!(
                through("https://api.example.com", &[("HTTPS_PROXY", value)]).as_deref(),
                Some(expected),
                "{value}"
            );
        }
        let err = proxy_for(
            &"https://api.example.com".parse().unwrap(),
            None,
            &env(&[("HTTPS_PROXY", "http://u:s3cret@bad host")]),
        )
        .unwrap_err();
        assert!(err.to_string().starts_with("HTTPS_PROXY is not"), "{err}");
        assert!(!err.to_string().contains("s3cret"), "{err}");
    }

    #[test]
    fn localhost_and_loopback_servers_never_use_the_environments_proxy() {
        for server in [
            "https://localhost:6443",
            "https://LOCALHOST",
            "https://127.0.0.1:6443",
            "https://127.3.2.1",
            "https://[::1]:6443",
            "https://[::ffff:127.0.0.1]:6443",
        ] {
            assert_eq!(through(server, &[PROXY]), None, "{server}");
        }
        // Only the name `localhost` itself: a name under it is an ordinary host.
        assert!(through("https://api.localhost", &[PROXY]).is_some());
    }

    #[test]
    fn no_proxy_names_hosts_and_domain_suffixes() {
        let rules = "example.com, .corp.internal,*.svc.local, ";
        let uses = |server: &str| through(server, &[PROXY, ("NO_PROXY", rules)]).is_some();
        // `example.com` covers itself and every name under it.
        assert!(!uses("https://example.com"));
        assert!(!uses("https://api.EXAMPLE.com:6443"));
        assert!(uses("https://notexample.com"));
        // `.corp.internal` and `*.svc.local` cover the names under them, not themselves.
        assert!(!uses("https://k8s.corp.internal"));
        assert!(uses("https://corp.internal"));
        assert!(!uses("https://api.svc.local"));
        assert!(uses("https://svc.local"));
        assert!(uses("https://api.example.org"));
    }

    #[test]
    fn no_proxy_entries_with_a_port_apply_to_that_port_only() {
        let rules = "example.com:6443,10.1.2.3:443,[fd00::1]:6443";
        let uses = |server: &str| through(server, &[PROXY, ("NO_PROXY", rules)]).is_some();
        assert!(!uses("https://api.example.com:6443"));
        assert!(uses("https://api.example.com:8443"));
        assert!(uses("https://api.example.com"));
        // The default port counts as the server's port.
        assert!(!uses("https://10.1.2.3"));
        assert!(uses("https://10.1.2.3:6443"));
        assert!(!uses("https://[fd00::1]:6443"));
        assert!(uses("https://[fd00::1]:443"));
    }

    #[test]
    fn no_proxy_takes_addresses_and_networks() {
        let rules = "10.0.0.0/8, 192.168.1.7, fd00::/16, ::ffff:172.16.0.1";
        let uses = |server: &str| through(server, &[PROXY, ("NO_PROXY", rules)]).is_some();
        assert!(!uses("https://10.200.3.4:6443"));
        assert!(uses("https://11.0.0.1:6443"));
        assert!(!uses("https://192.168.1.7:6443"));
        assert!(uses("https://192.168.1.8:6443"));
        assert!(!uses("https://[fd00:abcd::9]:6443"));
        assert!(uses("https://[fd01::9]:6443"));
        assert!(!uses("https://172.16.0.1"));
        // A network never covers a host name, nor a host name an address.
        assert!(uses("https://ten.example.com"));
        let whole = |server: &str| through(server, &[PROXY, ("NO_PROXY", "0.0.0.0/0")]);
        assert_eq!(whole("https://203.0.113.9"), None);
    }

    #[test]
    fn no_proxy_star_turns_the_environments_proxy_off_and_lower_case_is_read_too() {
        assert_eq!(
            through(
                "https://api.example.com",
                &[PROXY, ("NO_PROXY", "foo.com, *")]
            ),
            None
        );
        assert_eq!(
            through(
                "https://api.example.com",
                &[PROXY, ("no_proxy", "example.com")]
            ),
            None
        );
        // NO_PROXY wins over no_proxy when both are set.
        assert!(
            through(
                "https://api.example.com",
                &[
                    PROXY,
                    ("NO_PROXY", "other.com"),
                    ("no_proxy", "example.com")
                ]
            )
            .is_some()
        );
        // Empty and malformed entries are skipped, never an error.
        assert!(
            through(
                "https://api.example.com",
                &[PROXY, ("NO_PROXY", ",, :80, [::1, example.org,")]
            )
            .is_some()
        );
    }

    #[test]
    fn a_cgi_environment_refuses_http_proxy() {
        let vars = [
            ("HTTP_PROXY", "http://proxy.corp:3128"),
            ("REQUEST_METHOD", "GET"),
        ];
        let err = proxy_for(
            &"http://api.example.com".parse().unwrap(),
            None,
            &env(&vars),
        )
        .unwrap_err();
        assert_eq!(err, ProxyError::Cgi);
        // HTTPS_PROXY is not refused there.
        assert!(
            through(
                "https://api.example.com",
                &[PROXY, ("REQUEST_METHOD", "GET")]
            )
            .is_some()
        );
    }

    #[test]
    fn a_proxy_is_named_without_its_userinfo() {
        let proxy = proxy_for(
            &"https://api.example.com".parse().unwrap(),
            Some("http://alice:s3cret@proxy.corp:3128"),
            &ProxyEnv::default(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(proxy.shown(), "http://proxy.corp:3128");
        let failed = ThroughProxy {
            proxy: proxy.shown().into(),
            from: proxy.from,
            source: Box::new(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)),
        };
        let text = failed.to_string();
        assert!(
            text.starts_with("via proxy http://proxy.corp:3128 (the cluster's proxy-url): "),
            "{text}"
        );
        assert!(!text.contains("s3cret"), "{text}");
    }
}
