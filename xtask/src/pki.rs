//! The test environment's throw-away PKI, generated with rcgen: one CA, one serving cert for
//! 127.0.0.1/localhost shared by every API server, client certs for the admin
//! (`system:masters`), the read-only user and the controller-manager, and the service-account
//! signing key. It must not be used for anything but the local loopback test environment.

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
    })
}

impl Pki {
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
}
