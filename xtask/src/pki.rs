//! The test environment's throw-away PKI, generated with rcgen: one CA, one serving cert for
//! 127.0.0.1/localhost shared by every API server, client certs for the admin
//! (`system:masters`), the read-only user and the controller-manager, and the service-account
//! signing key; for a Karmada hub also the serving certs of its aggregated API server and
//! webhook, the aggregator's front-proxy client cert, the components' client cert and the
//! members' bearer token. It must not be used for anything but the local loopback test
//! environment.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};

/// The read-only user (bound to get/list/watch on every cluster).
pub const READONLY_USER: &str = "flotilla-testenv-readonly";
/// The admin user; its group `system:masters` is RBAC's superuser group.
pub const ADMIN_USER: &str = "flotilla-testenv-admin";
const KCM_USER: &str = "flotilla-testenv-controller-manager";
/// The identity of Karmada's components on the hub (superuser, like upstream's install).
const KARMADA_USER: &str = "flotilla-testenv-karmada";
/// The user behind the bearer token Karmada presents to members.
pub const MEMBER_TOKEN_USER: &str = "flotilla-testenv-karmada-member";
/// The Service the aggregator dials for Karmada's cluster API (`<name>.<namespace>.svc` is the
/// TLS server name it verifies).
pub const KARMADA_AA_SERVICE_HOST: &str = "karmada-aggregated-apiserver.karmada-system.svc";

/// PEM text of one certificate and its private key.
pub struct CertKey {
    pub cert: String,
    pub key: String,
}

pub struct Pki {
    pub ca: CertKey,
    pub apiserver: CertKey,
    pub admin: CertKey,
    pub readonly: CertKey,
    pub controller_manager: CertKey,
    pub sa_key: String,
    pub sa_pub: String,
    issuer: Issuer<'static, KeyPair>,
}

/// The Karmada hub's extra credentials (`up --hub karmada`).
pub struct KarmadaPki {
    /// karmada-aggregated-apiserver's serving cert.
    pub aggregated_apiserver: CertKey,
    /// What the hub's aggregator presents to it (CN `front-proxy-client`).
    pub front_proxy_client: CertKey,
    /// karmada-webhook's serving cert (it listens on 127.0.0.1).
    pub webhook: CertKey,
    /// Karmada's components' client cert on the hub (`system:masters`).
    pub components: CertKey,
    /// The bearer token Karmada uses on every member (a static token of a superuser).
    pub member_token: String,
}

/// Where `KarmadaPki::write` puts its files.
pub struct KarmadaPkiFiles {
    pub aggregated_apiserver_cert: PathBuf,
    pub aggregated_apiserver_key: PathBuf,
    pub front_proxy_client_cert: PathBuf,
    pub front_proxy_client_key: PathBuf,
    /// A directory holding `tls.crt` and `tls.key` (karmada-webhook's `--cert-dir`).
    pub webhook_cert_dir: PathBuf,
    /// The members' `--token-auth-file`.
    pub member_tokens: PathBuf,
}

impl KarmadaPkiFiles {
    pub fn new(dir: &Path) -> Self {
        Self {
            aggregated_apiserver_cert: dir.join("karmada-aggregated-apiserver.crt"),
            aggregated_apiserver_key: dir.join("karmada-aggregated-apiserver.key"),
            front_proxy_client_cert: dir.join("front-proxy-client.crt"),
            front_proxy_client_key: dir.join("front-proxy-client.key"),
            webhook_cert_dir: dir.join("karmada-webhook"),
            member_tokens: dir.join("member-tokens.csv"),
        }
    }
}

/// File locations of the PKI inside `dir`.
pub struct PkiFiles {
    pub ca_cert: PathBuf,
    pub apiserver_cert: PathBuf,
    pub apiserver_key: PathBuf,
    pub sa_key: PathBuf,
    pub sa_pub: PathBuf,
}

impl PkiFiles {
    pub fn new(dir: &Path) -> Self {
        Self {
            ca_cert: dir.join("ca.crt"),
            apiserver_cert: dir.join("apiserver.crt"),
            apiserver_key: dir.join("apiserver.key"),
            sa_key: dir.join("sa.key"),
            sa_pub: dir.join("sa.pub"),
        }
    }
}

fn name(cn: &str, org: Option<&str>) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    if let Some(org) = org {
        dn.push(DnType::OrganizationName, org);
    }
    dn.push(DnType::CommonName, cn);
    dn
}

fn leaf(
    issuer: &Issuer<'_, KeyPair>,
    sans: &[&str],
    dn: DistinguishedName,
    usage: ExtendedKeyUsagePurpose,
) -> Result<CertKey> {
    let key = KeyPair::generate()?;
    let mut params =
        CertificateParams::new(sans.iter().map(|s| (*s).to_string()).collect::<Vec<_>>())?;
    params.distinguished_name = dn;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![usage];
    params.use_authority_key_identifier_extension = true;
    let cert = params.signed_by(&key, issuer)?;
    Ok(CertKey {
        cert: cert.pem(),
        key: key.serialize_pem(),
    })
}

/// Generates a fresh PKI (ECDSA P-256 everywhere; validity is rcgen's default, which is
/// irrelevant for an environment rebuilt on every fresh `up`).
pub fn generate() -> Result<Pki> {
    let ca_key = KeyPair::generate()?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.distinguished_name = name("flotilla-testenv-ca", None);
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca_params.self_signed(&ca_key)?;
    let ca = CertKey {
        cert: ca_cert.pem(),
        key: ca_key.serialize_pem(),
    };
    let issuer = Issuer::new(ca_params, ca_key);

    let apiserver = leaf(
        &issuer,
        &[
            "127.0.0.1",
            "localhost",
            "kubernetes",
            "kubernetes.default",
            "kubernetes.default.svc",
            "10.0.0.1",
        ],
        name("flotilla-testenv-apiserver", None),
        ExtendedKeyUsagePurpose::ServerAuth,
    )?;
    let admin = leaf(
        &issuer,
        &[],
        name(ADMIN_USER, Some("system:masters")),
        ExtendedKeyUsagePurpose::ClientAuth,
    )?;
    let readonly = leaf(
        &issuer,
        &[],
        name(READONLY_USER, None),
        ExtendedKeyUsagePurpose::ClientAuth,
    )?;
    // The controller-manager runs only the namespace and garbage-collector controllers, which
    // must be able to delete anything; superuser keeps it simple.
    let controller_manager = leaf(
        &issuer,
        &[],
        name(KCM_USER, Some("system:masters")),
        ExtendedKeyUsagePurpose::ClientAuth,
    )?;
    let sa = KeyPair::generate()?;
    Ok(Pki {
        ca,
        apiserver,
        admin,
        readonly,
        controller_manager,
        sa_key: sa.serialize_pem(),
        sa_pub: sa.public_key_pem(),
        issuer,
    })
}

/// 32 hex digits from the kernel's random source.
pub(crate) fn random_token() -> Result<String> {
    use std::io::Read as _;
    let mut bytes = [0u8; 16];
    fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("reading /dev/urandom for the member token")?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl Pki {
    /// Signs the Karmada hub's extra certificates with this PKI's CA.
    pub fn karmada(&self) -> Result<KarmadaPki> {
        Ok(KarmadaPki {
            aggregated_apiserver: leaf(
                &self.issuer,
                &[KARMADA_AA_SERVICE_HOST, "localhost", "127.0.0.1"],
                name("karmada-aggregated-apiserver", None),
                ExtendedKeyUsagePurpose::ServerAuth,
            )?,
            front_proxy_client: leaf(
                &self.issuer,
                &[],
                name("front-proxy-client", None),
                ExtendedKeyUsagePurpose::ClientAuth,
            )?,
            webhook: leaf(
                &self.issuer,
                &["127.0.0.1", "localhost"],
                name("karmada-webhook", None),
                ExtendedKeyUsagePurpose::ServerAuth,
            )?,
            components: leaf(
                &self.issuer,
                &[],
                name(KARMADA_USER, Some("system:masters")),
                ExtendedKeyUsagePurpose::ClientAuth,
            )?,
            member_token: random_token()?,
        })
    }

    /// Writes the files the API servers read (the kubeconfigs embed the client certs).
    pub fn write(&self, dir: &Path) -> Result<PkiFiles> {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let files = PkiFiles::new(dir);
        for (path, text) in [
            (&files.ca_cert, &self.ca.cert),
            (&dir.join("ca.key"), &self.ca.key),
            (&files.apiserver_cert, &self.apiserver.cert),
            (&files.apiserver_key, &self.apiserver.key),
            (&files.sa_key, &self.sa_key),
            (&files.sa_pub, &self.sa_pub),
        ] {
            fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(files)
    }
}

impl KarmadaPki {
    /// Writes the files Karmada's processes and the members' API servers read.
    pub fn write(&self, dir: &Path) -> Result<KarmadaPkiFiles> {
        let files = KarmadaPkiFiles::new(dir);
        fs::create_dir_all(&files.webhook_cert_dir)
            .with_context(|| format!("creating {}", files.webhook_cert_dir.display()))?;
        let tokens = format!(
            "{},{MEMBER_TOKEN_USER},{MEMBER_TOKEN_USER},\"system:masters\"\n",
            self.member_token
        );
        for (path, text) in [
            (
                &files.aggregated_apiserver_cert,
                &self.aggregated_apiserver.cert,
            ),
            (
                &files.aggregated_apiserver_key,
                &self.aggregated_apiserver.key,
            ),
            (
                &files.front_proxy_client_cert,
                &self.front_proxy_client.cert,
            ),
            (&files.front_proxy_client_key, &self.front_proxy_client.key),
            (&files.webhook_cert_dir.join("tls.crt"), &self.webhook.cert),
            (&files.webhook_cert_dir.join("tls.key"), &self.webhook.key),
            (&files.member_tokens, &tokens),
        ] {
            fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(files)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generates_pem() {
        let pki = generate().expect("pki");
        assert!(pki.ca.cert.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(pki.admin.key.contains("PRIVATE KEY"));
        assert!(pki.sa_pub.contains("PUBLIC KEY"));
    }

    #[test]
    fn karmada_extras_are_signed_and_the_token_is_random() {
        let pki = generate().expect("pki");
        let a = pki.karmada().expect("karmada");
        let b = pki.karmada().expect("karmada again");
        assert!(
            a.aggregated_apiserver
                .cert
                .starts_with("-----BEGIN CERTIFICATE-----")
        );
        assert_eq!(a.member_token.len(), 32);
        assert_ne!(a.member_token, b.member_token);
    }
}
