//! Kubeconfig handling as kubectl does it: `--kubeconfig`, else `$KUBECONFIG` (files merged,
//! first one wins), else `~/.kube/config`; contexts chosen by glob; one client per context,
//! through the proxy kubectl would use (the cluster's `proxy-url`, else `HTTPS_PROXY` /
//! `HTTP_PROXY` unless `NO_PROXY` names the server; see [`proxy`](super::proxy)).
//! It only reads kubeconfig files: it must never write one, nor change `current-context`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError as KubeRsError};
use kube::{Client, Config};

use super::credentials;
use super::proxy::{self, Proxy, ProxyEnv};
use crate::safe_text;

pub use crate::glob::glob_match;

/// Why the kubeconfig could not be used; each is the operator's input to fix.
#[derive(Debug, thiserror::Error)]
pub enum KubeconfigError {
    #[error(
        "cannot read kubeconfig {path}: {reason}\n  hint: pass --kubeconfig FILE or set KUBECONFIG"
    )]
    Unreadable { path: String, reason: String },
    #[error(
        "no kubeconfig found: {reason}\n  hint: pass --kubeconfig FILE, set KUBECONFIG, or use --demo"
    )]
    NotFound { reason: String },
    #[error("--context {pattern:?} matches no context in the kubeconfig; contexts are: {known}")]
    NoMatch { pattern: String, known: String },
}

/// Loads the kubeconfig the way kubectl would: an explicit file must exist; of `$KUBECONFIG`'s
/// files, those that do not exist are skipped (kubectl skips them silently; a warning goes to
/// stderr so a typo is seen), the rest merged with the first to set a value winning.
pub fn load(explicit: Option<&Path>) -> Result<Kubeconfig, KubeconfigError> {
    let (kubeconfig, skipped) = load_reporting(explicit, std::env::var_os("KUBECONFIG"))?;
    for path in skipped {
        eprintln!(
            "warning: KUBECONFIG names {}, which does not exist; skipped",
            safe_text::printable(&path, false)
        );
    }
    Ok(kubeconfig)
}

/// [`load`] with `$KUBECONFIG` given, returning the files it skipped.
fn load_reporting(
    explicit: Option<&Path>,
    env: Option<std::ffi::OsString>,
) -> Result<(Kubeconfig, Vec<String>), KubeconfigError> {
    if let Some(path) = explicit {
        return read_file(path).map(|kubeconfig| (kubeconfig, Vec::new()));
    }
    let paths: Vec<PathBuf> = env
        .as_deref()
        .map(crate::paths::kubeconfig_env_files)
        .unwrap_or_default();
    if paths.is_empty() {
        return Kubeconfig::read()
            .map(|kubeconfig| (kubeconfig, Vec::new()))
            .map_err(|err| KubeconfigError::NotFound {
                reason: safe_text::redact(&err.to_string()),
            });
    }
    let (present, missing): (Vec<PathBuf>, Vec<PathBuf>) =
        paths.into_iter().partition(|path| path.exists());
    let skipped: Vec<String> = missing
        .iter()
        .map(|path| path.display().to_string())
        .collect();
    if present.is_empty() {
        return Err(KubeconfigError::NotFound {
            reason: format!("none of KUBECONFIG's files exist ({})", skipped.join(", ")),
        });
    }
    let mut merged = Kubeconfig::default();
    for path in &present {
        let next = read_file(path)?;
        merged = merged
            .merge(next)
            .map_err(|err| KubeconfigError::Unreadable {
                path: path.display().to_string(),
                reason: safe_text::redact(&err.to_string()),
            })?;
    }
    Ok((merged, skipped))
}

fn read_file(path: &Path) -> Result<Kubeconfig, KubeconfigError> {
    Kubeconfig::read_from(path).map_err(|err| KubeconfigError::Unreadable {
        path: path.display().to_string(),
        reason: safe_text::redact(&err.to_string()),
    })
}

/// The names of every context, in file order.
pub fn context_names(kubeconfig: &Kubeconfig) -> Vec<String> {
    kubeconfig
        .contexts
        .iter()
        .map(|context| context.name.clone())
        .collect()
}

/// The contexts matching any of the globs, in kubeconfig order; a glob matching nothing is an
/// error (a typo must not silently shrink the fleet).
pub fn select_contexts(
    kubeconfig: &Kubeconfig,
    patterns: &[String],
) -> Result<Vec<String>, KubeconfigError> {
    let names = context_names(kubeconfig);
    for pattern in patterns {
        if !names.iter().any(|name| glob_match(pattern, name)) {
            return Err(KubeconfigError::NoMatch {
                pattern: pattern.clone(),
                known: if names.is_empty() {
                    "(none)".to_string()
                } else {
                    names.join(", ")
                },
            });
        }
    }
    Ok(names
        .into_iter()
        .filter(|name| patterns.iter().any(|pattern| glob_match(pattern, name)))
        .collect())
}

/// Timeouts applied to every client.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub connect: Duration,
    pub read: Duration,
}

impl Timeouts {
    /// How long a context's credentials may take (an `exec` plugin included): twice the
    /// connect timeout, so a plugin that fetches a token over the network has time to.
    pub fn credentials(&self) -> Duration {
        self.connect * 2
    }
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(5),
            read: Duration::from_secs(20),
        }
    }
}

/// Why a cluster has no client: flotilla has no way to reach it at all (no context), or the
/// way it has failed (credentials, a proxy, a malformed entry). Per cluster, shown as that
/// cluster's status, never a failure of the whole fleet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientError {
    NoAccess(String),
    Failed(String),
}

impl ClientError {
    /// The cluster's health while it has no client.
    pub fn health(&self) -> crate::model::Health {
        match self {
            ClientError::NoAccess(_) => crate::model::Health::NoAccess,
            ClientError::Failed(_) => crate::model::Health::Unknown,
        }
    }
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::NoAccess(why) | ClientError::Failed(why) => f.write_str(why),
        }
    }
}

impl From<ClientError> for String {
    fn from(error: ClientError) -> String {
        error.to_string()
    }
}

/// A client for one context.
pub async fn client_for(
    kubeconfig: &Kubeconfig,
    context: &str,
    timeouts: Timeouts,
) -> Result<Client, ClientError> {
    if !has_context(kubeconfig, context) {
        return Err(ClientError::NoAccess(no_context(context)));
    }
    let (config, proxy) = config_for(kubeconfig, context, timeouts)
        .await
        .map_err(ClientError::Failed)?;
    client_from(config, proxy.as_ref(), context, timeouts).map_err(ClientError::Failed)
}

fn has_context(kubeconfig: &Kubeconfig, context: &str) -> bool {
    kubeconfig
        .contexts
        .iter()
        .any(|named| named.name == context)
}

fn no_context(context: &str) -> String {
    format!(
        "no access: no context named {context:?} in the kubeconfig (add one, or map the cluster to a context with the annotation flotilla.dev/context)"
    )
}

/// A client for a cluster reached through another's API server at `path` (a hub's proxy to
/// its member, e.g. `/apis/cluster.karmada.io/v1alpha1/clusters/NAME/proxy`), with the
/// credentials of `context`.
pub async fn proxied_client_for(
    kubeconfig: &Kubeconfig,
    context: &str,
    path: &str,
    timeouts: Timeouts,
) -> Result<Client, String> {
    let (mut config, proxy) = config_for(kubeconfig, context, timeouts).await?;
    let url = format!(
        "{}{path}",
        config.cluster_url.to_string().trim_end_matches('/')
    );
    config.cluster_url = url.parse().map_err(|err| {
        safe_text::redact(&format!("cannot reach {path} through {context:?}: {err}"))
    })?;
    client_from(config, proxy.as_ref(), context, timeouts)
}

/// The client configuration of `context`, with the proxy kubectl would reach its server
/// through (already in `proxy_url`; returned too, for messages to name it).
async fn config_for(
    kubeconfig: &Kubeconfig,
    context: &str,
    timeouts: Timeouts,
) -> Result<(Config, Option<Proxy>), String> {
    if !has_context(kubeconfig, context) {
        return Err(no_context(context));
    }
    // The whole credential step has one deadline, so a slow plugin costs only its own cluster.
    let deadline = timeouts.credentials();
    let step = async {
        let mut kubeconfig = only_context(kubeconfig, context);
        credentials::resolve_exec(&mut kubeconfig, context, deadline).await?;
        let options = KubeConfigOptions {
            context: Some(context.to_string()),
            ..KubeConfigOptions::default()
        };
        let proxy_url = kubeconfig
            .clusters
            .first()
            .and_then(|named| named.cluster.as_ref())
            .and_then(|cluster| cluster.proxy_url.clone());
        let mut config = match Config::from_custom_kubeconfig(kubeconfig.clone(), &options).await {
            Ok(config) => config,
            // kube-rs reads HTTPS_PROXY and NO_PROXY too, and refuses values kubectl takes
            // (an empty NO_PROXY entry, as a trailing comma leaves); the proxy is decided
            // below either way, so such a refusal is no reason to fail.
            Err(KubeRsError::ParseNoProxy(_) | KubeRsError::ParseProxyUrl(_)) => {
                config_without_proxy(&kubeconfig, context)?
            }
            Err(err) => {
                return Err(safe_text::redact(&format!(
                    "kubeconfig context {context:?}: {err}"
                )));
            }
        };
        let proxy = proxy::proxy_for(
            &config.cluster_url,
            proxy_url.as_deref(),
            &ProxyEnv::from_process(),
        )
        .map_err(|err| safe_text::redact(&format!("kubeconfig context {context:?}: {err}")))?;
        config.proxy_url = proxy.as_ref().map(|proxy| proxy.url.clone());
        Ok((config, proxy))
    };
    match tokio::time::timeout(deadline + Duration::from_secs(1), step).await {
        Ok(result) => result,
        Err(_) => Err(format!(
            "no credentials within {}s; {}",
            deadline.as_secs(),
            credentials::needs_login(context)
        )),
    }
}

/// The part of `kubeconfig` that `context` uses: the context, its cluster and its user. Each
/// client is built from its own part rather than from a copy of the whole file, which with a
/// thousand contexts would copy every context's credentials for every client.
fn only_context(kubeconfig: &Kubeconfig, context: &str) -> Kubeconfig {
    let named = kubeconfig
        .contexts
        .iter()
        .find(|named| named.name == context)
        .cloned();
    let uses = named.as_ref().and_then(|named| named.context.as_ref());
    let cluster = uses.map(|uses| uses.cluster.as_str());
    let user = uses.and_then(|uses| uses.user.as_deref());
    Kubeconfig {
        preferences: kubeconfig.preferences.clone(),
        clusters: kubeconfig
            .clusters
            .iter()
            .filter(|named| Some(named.name.as_str()) == cluster)
            .cloned()
            .collect(),
        auth_infos: kubeconfig
            .auth_infos
            .iter()
            .filter(|named| Some(named.name.as_str()) == user)
            .cloned()
            .collect(),
        contexts: named.into_iter().collect(),
        current_context: Some(context.to_string()),
        extensions: kubeconfig.extensions.clone(),
        kind: kubeconfig.kind.clone(),
        api_version: kubeconfig.api_version.clone(),
        other: kubeconfig.other.clone(),
    }
}

/// What kube-rs's `Config::from_custom_kubeconfig` makes of the part of the kubeconfig that
/// [`only_context`] kept, but for the proxy, which [`config_for`] decides: for when kube-rs
/// refuses the environment's proxy variables (it reads them whatever the caller wants).
fn config_without_proxy(kubeconfig: &Kubeconfig, context: &str) -> Result<Config, String> {
    let fail = |what: String| safe_text::redact(&format!("kubeconfig context {context:?}: {what}"));
    let uses = kubeconfig
        .contexts
        .first()
        .and_then(|named| named.context.clone())
        .ok_or_else(|| fail("the context is empty".into()))?;
    let cluster = kubeconfig
        .clusters
        .first()
        .and_then(|named| named.cluster.clone())
        .ok_or_else(|| fail(format!("no cluster named {:?}", uses.cluster)))?;
    let server = cluster
        .server
        .as_deref()
        .ok_or_else(|| fail("the cluster has no server".into()))?
        .parse()
        .map_err(|err| fail(format!("failed to parse cluster url: {err}")))?;
    let mut config = Config::new(server);
    config.default_namespace = uses.namespace.unwrap_or_else(|| "default".into());
    config.accept_invalid_certs = cluster.insecure_skip_tls_verify.unwrap_or(false);
    config.disable_compression = cluster.disable_compression.unwrap_or(false);
    config.tls_server_name = cluster.tls_server_name.clone();
    config.root_cert = certificate_authority(&cluster).map_err(fail)?;
    let mut auth = kubeconfig
        .auth_infos
        .first()
        .and_then(|named| named.auth_info.clone())
        .unwrap_or_default();
    if let Some(exec) = auth.exec.as_mut()
        && exec.provide_cluster_info
    {
        exec.cluster = kube::config::ExecAuthCluster::try_from(&cluster).ok();
    }
    config.auth_info = auth;
    Ok(config)
}

/// The certificates of the cluster's `certificate-authority-data` or `certificate-authority`
/// file, as DER.
fn certificate_authority(cluster: &kube::config::Cluster) -> Result<Option<Vec<Vec<u8>>>, String> {
    use base64::Engine as _;
    let pem = match (
        &cluster.certificate_authority_data,
        &cluster.certificate_authority,
    ) {
        (Some(data), _) => base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|err| format!("failed to load certificate authority: {err}"))?,
        (None, Some(file)) => std::fs::read(file)
            .map_err(|err| format!("failed to load certificate authority {file}: {err}"))?,
        (None, None) => return Ok(None),
    };
    let blocks = pem::parse_many(&pem)
        .map_err(|err| format!("failed to parse PEM-encoded certificates: {err}"))?;
    Ok(Some(
        blocks
            .into_iter()
            .filter(|block| block.tag() == "CERTIFICATE")
            .map(pem::Pem::into_contents)
            .collect(),
    ))
}

fn client_from(
    mut config: Config,
    proxy: Option<&Proxy>,
    context: &str,
    timeouts: Timeouts,
) -> Result<Client, String> {
    strip_userinfo(&mut config);
    config.connect_timeout = Some(timeouts.connect);
    config.read_timeout = Some(timeouts.read);
    config.reset_reader_on_write = true;
    super::retry_after::client(config, proxy.map(proxy::NameProxy::new))
        .map_err(|err| safe_text::redact(&format!("cannot build a client for {context:?}: {err}")))
}

/// A server URL's `user:password@` never goes out with a request, where every request's URL
/// would carry it into kube-rs's and hyper's logs: it becomes the basic credentials it stands
/// for (as kubectl's HTTP client uses it) when the context's user has none of its own.
fn strip_userinfo(config: &mut Config) {
    let uri = &config.cluster_url;
    let Some(authority) = uri.authority() else {
        return;
    };
    let Some((userinfo, host)) = authority.as_str().rsplit_once('@') else {
        return;
    };
    let auth = &mut config.auth_info;
    let has_own = auth.username.is_some()
        || auth.token.is_some()
        || auth.token_file.is_some()
        || auth.exec.is_some()
        || auth.auth_provider.is_some()
        || auth.client_certificate.is_some()
        || auth.client_certificate_data.is_some();
    if !has_own {
        let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
        auth.username = Some(user.to_string());
        auth.password = Some(password.to_string().into());
    }
    let mut parts = uri.clone().into_parts();
    parts.authority = host.parse().ok();
    if let Ok(stripped) = http::Uri::from_parts(parts) {
        config.cluster_url = stripped;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const KUBECONFIG: &str = r#"
apiVersion: v1
kind: Config
current-context: hub
clusters:
- name: c1
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u1
  user: {token: secret}
contexts:
- name: hub
  context: {cluster: c1, user: u1}
- name: member-1
  context: {cluster: c1, user: u1}
- name: member-2
  context: {cluster: c1, user: u1}
"#;

    #[test]
    fn contexts_are_selected_by_glob_in_file_order() {
        let kubeconfig = Kubeconfig::from_yaml(KUBECONFIG).unwrap();
        let chosen = select_contexts(&kubeconfig, &["member-*".into()]).unwrap();
        assert_eq!(chosen, vec!["member-1", "member-2"]);
        let err = select_contexts(&kubeconfig, &["prod-*".into()]).unwrap_err();
        assert!(err.to_string().contains("hub, member-1, member-2"), "{err}");
    }

    #[tokio::test]
    async fn a_missing_context_is_a_per_cluster_error() {
        let kubeconfig = Kubeconfig::from_yaml(KUBECONFIG).unwrap();
        let Err(err) = client_for(&kubeconfig, "nope", Timeouts::default()).await else {
            panic!("a missing context must not produce a client");
        };
        assert_eq!(err.health(), crate::model::Health::NoAccess);
        assert!(err.to_string().contains("flotilla.dev/context"), "{err}");
        assert!(
            client_for(&kubeconfig, "member-1", Timeouts::default())
                .await
                .is_ok()
        );
    }

    #[test]
    fn kubeconfig_skips_missing_files_but_an_explicit_file_must_exist() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good");
        std::fs::write(&good, KUBECONFIG).unwrap();
        let missing = dir.path().join("missing");
        let env = std::env::join_paths([&good, &missing]).unwrap();
        let (kubeconfig, skipped) = load_reporting(None, Some(env)).unwrap();
        assert_eq!(
            context_names(&kubeconfig),
            vec!["hub", "member-1", "member-2"]
        );
        assert_eq!(skipped, vec![missing.display().to_string()]);
        let err = load_reporting(Some(&missing), None).unwrap_err();
        assert!(matches!(err, KubeconfigError::Unreadable { .. }), "{err}");
        let env = std::env::join_paths([&missing]).unwrap();
        assert!(load_reporting(None, Some(env)).is_err());
    }

    #[tokio::test]
    async fn without_kube_rs_the_config_is_what_kube_rs_makes_of_the_context() {
        let ca = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/pki/foreign-ca.crt"),
        )
        .unwrap();
        use base64::Engine as _;
        let ca = base64::engine::general_purpose::STANDARD.encode(ca);
        let text = KUBECONFIG
            .replace(
                "cluster: {server: \"https://127.0.0.1:1\"}",
                &format!(
                    "cluster: {{server: \"https://api.example.com:6443\", certificate-authority-data: {ca}, tls-server-name: kubernetes, disable-compression: true}}"
                ),
            )
            .replace(
                "context: {cluster: c1, user: u1}\n- name: member-1",
                "context: {cluster: c1, user: u1, namespace: shop}\n- name: member-1",
            );
        let kubeconfig = only_context(&Kubeconfig::from_yaml(&text).unwrap(), "hub");
        let options = KubeConfigOptions {
            context: Some("hub".into()),
            ..KubeConfigOptions::default()
        };
        let theirs = Config::from_custom_kubeconfig(kubeconfig.clone(), &options)
            .await
            .unwrap();
        let ours = config_without_proxy(&kubeconfig, "hub").unwrap();
        assert_eq!(ours.cluster_url, theirs.cluster_url);
        assert_eq!(ours.default_namespace, "shop");
        assert_eq!(ours.default_namespace, theirs.default_namespace);
        assert!(
            ours.root_cert
                .as_ref()
                .is_some_and(|certs| certs.len() == 1)
        );
        assert_eq!(ours.root_cert, theirs.root_cert);
        assert_eq!(ours.tls_server_name.as_deref(), Some("kubernetes"));
        assert_eq!(ours.tls_server_name, theirs.tls_server_name);
        assert!(ours.disable_compression && theirs.disable_compression);
        assert_eq!(ours.accept_invalid_certs, theirs.accept_invalid_certs);
        assert_eq!(
            format!("{:?}", ours.auth_info),
            format!("{:?}", theirs.auth_info)
        );
        assert!(ours.auth_info.token.is_some());
        assert_eq!(ours.proxy_url, None);
    }

    #[tokio::test]
    async fn userinfo_in_a_server_url_never_stays_in_the_url() {
        let kubeconfig = Kubeconfig::from_yaml(
            &KUBECONFIG
                .replace("https://127.0.0.1:1", "https://admin:pa55@127.0.0.1:1")
                .replace("user: {token: secret}", "user: {}"),
        )
        .unwrap();
        let (mut config, _) = config_for(&kubeconfig, "hub", Timeouts::default())
            .await
            .unwrap();
        strip_userinfo(&mut config);
        assert_eq!(config.cluster_url.to_string(), "https://127.0.0.1:1/");
        assert_eq!(config.auth_info.username.as_deref(), Some("admin"));
    }
}
