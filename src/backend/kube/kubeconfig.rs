//! Kubeconfig handling as kubectl does it: `--kubeconfig`, else `$KUBECONFIG` (files merged,
//! first one wins), else `~/.kube/config`; contexts chosen by glob; one client per context.
//! It only reads kubeconfig files: it must never write one, nor change `current-context`.

use std::path::Path;
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

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

/// Loads the kubeconfig the way kubectl would.
pub fn load(explicit: Option<&Path>) -> Result<Kubeconfig, KubeconfigError> {
    match explicit {
        Some(path) => Kubeconfig::read_from(path).map_err(|err| KubeconfigError::Unreadable {
            path: path.display().to_string(),
            reason: err.to_string(),
        }),
        None => Kubeconfig::read().map_err(|err| KubeconfigError::NotFound {
            reason: err.to_string(),
        }),
    }
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

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(5),
            read: Duration::from_secs(20),
        }
    }
}

/// A client for one context. Errors are per cluster (shown as that cluster's status), so they
/// are returned as text, never as a failure of the whole fleet.
pub async fn client_for(
    kubeconfig: &Kubeconfig,
    context: &str,
    timeouts: Timeouts,
) -> Result<Client, String> {
    let config = config_for(kubeconfig, context).await?;
    client_from(config, context, timeouts)
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
    let mut config = config_for(kubeconfig, context).await?;
    let url = format!(
        "{}{path}",
        config.cluster_url.to_string().trim_end_matches('/')
    );
    config.cluster_url = url
        .parse()
        .map_err(|err| format!("cannot reach {path} through {context:?}: {err}"))?;
    client_from(config, context, timeouts)
}

async fn config_for(kubeconfig: &Kubeconfig, context: &str) -> Result<Config, String> {
    if !kubeconfig
        .contexts
        .iter()
        .any(|named| named.name == context)
    {
        return Err(format!(
            "no context named {context:?} in the kubeconfig (map the cluster with the annotation flotilla.dev/context)"
        ));
    }
    let options = KubeConfigOptions {
        context: Some(context.to_string()),
        ..KubeConfigOptions::default()
    };
    Config::from_custom_kubeconfig(kubeconfig.clone(), &options)
        .await
        .map_err(|err| format!("kubeconfig context {context:?}: {err}"))
}

fn client_from(mut config: Config, context: &str, timeouts: Timeouts) -> Result<Client, String> {
    config.connect_timeout = Some(timeouts.connect);
    config.read_timeout = Some(timeouts.read);
    config.reset_reader_on_write = true;
    super::retry_after::client(config)
        .map_err(|err| format!("cannot build a client for {context:?}: {err}"))
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
        assert!(err.contains("flotilla.dev/context"), "{err}");
        assert!(
            client_for(&kubeconfig, "member-1", Timeouts::default())
                .await
                .is_ok()
        );
    }
}
