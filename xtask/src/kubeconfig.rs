//! Renders kubeconfig YAML for the test environment: the user-facing one (contexts `hub`,
//! `member-K` and `<cluster>-readonly`, no current-context) and the private client configs of
//! the controller-managers and Karmada's components. It only renders text; callers decide where it goes, and it must
//! never be pointed at a user's own kubeconfig.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use crate::pki::{CertKey, Pki};

pub fn b64(text: &str) -> String {
    STANDARD.encode(text.as_bytes())
}

fn user(out: &mut String, name: &str, ck: &CertKey) {
    out.push_str(&format!(
        "- name: {name}\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\n",
        b64(&ck.cert),
        b64(&ck.key)
    ));
}

fn context(out: &mut String, name: &str, cluster: &str, user: &str) {
    out.push_str(&format!(
        "- name: {name}\n  context:\n    cluster: {cluster}\n    user: {user}\n"
    ));
}

/// The test environment kubeconfig. `clusters` are `(name, port)` pairs, hub first. No
/// `current-context` is set: every command must name its context.
pub fn render(pki: &Pki, clusters: &[(String, u16)]) -> String {
    let ca = b64(&pki.ca.cert);
    let mut out = String::from(
        "# Written by `cargo xtask testenv up`; regenerated on every fresh start.\n\
         apiVersion: v1\nkind: Config\npreferences: {}\nclusters:\n",
    );
    for (name, port) in clusters {
        out.push_str(&format!(
            "- name: {name}\n  cluster:\n    server: https://127.0.0.1:{port}\n    certificate-authority-data: {ca}\n"
        ));
    }
    out.push_str("users:\n");
    user(&mut out, "testenv-admin", &pki.admin);
    user(&mut out, "testenv-readonly", &pki.readonly);
    out.push_str("contexts:\n");
    for (name, _) in clusters {
        context(&mut out, name, name, "testenv-admin");
    }
    for (name, _) in clusters {
        context(
            &mut out,
            &format!("{name}-readonly"),
            name,
            "testenv-readonly",
        );
    }
    out
}

/// The controller-manager's own client config for one cluster (internal to testenv).
pub fn render_controller_manager(pki: &Pki, port: u16) -> String {
    render_private(pki, "controller-manager", &pki.controller_manager, port)
}

/// A private one-context client config (internal to testenv): `ck` as `user_name` on
/// https://127.0.0.1:`port`, trusting the test CA.
pub fn render_private(pki: &Pki, user_name: &str, ck: &CertKey, port: u16) -> String {
    let mut out = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: self\n  cluster:\n    server: https://127.0.0.1:{port}\n    certificate-authority-data: {}\nusers:\n",
        b64(&pki.ca.cert)
    );
    user(&mut out, user_name, ck);
    out.push_str("contexts:\n");
    context(&mut out, "self", "self", user_name);
    out.push_str("current-context: self\n");
    out
}
