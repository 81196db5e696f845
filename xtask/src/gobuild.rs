//! Builds kube-apiserver, kube-controller-manager, kube-scheduler, etcd and KWOK (with its
//! lifecycle stages, generated from its module) and, for each hub, what its `HubBuild`
//! describes (its components plus a copy of its module's manifests) from the committed Go
//! wrapper modules (`xtask/go/*`) into versioned caches, atomically and with a stamp, so an
//! interrupted build never leaves a binary that looks valid; a build in the background (see
//! `Mode`) prefixes its lines, runs under `nice` and stops when told. It must not run anything
//! but `go` (and `nice` in front of it), and must never write into the repository except through
//! `go`'s own go.mod/go.sum upkeep (`-mod=mod`).

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};

use crate::paths;

/// The oldest Go that builds Kubernetes 1.36 (its go.mod says `go 1.26.0`).
const MIN_GO: (u32, u32) = (1, 26);

pub const GO_MISSING: &str = "the integration tier needs Go ≥ 1.26 to build kube-apiserver and \
etcd from the module proxy: apt-get install golang or see README";

/// The versions pinned by the wrapper modules' go.mod files (the single source of truth).
#[derive(Debug, Clone)]
pub struct Versions {
    /// e.g. `v1.36.3`
    pub kubernetes: String,
    /// e.g. `v3.6.8`
    pub etcd: String,
}

impl Versions {
    pub fn from_wrappers() -> Result<Self> {
        let kubernetes = require_version(
            &paths::go_module_dir("kube-apiserver").join("go.mod"),
            "k8s.io/kubernetes",
        )?;
        let etcd = require_version(
            &paths::go_module_dir("etcd").join("go.mod"),
            "go.etcd.io/etcd/server/v3",
        )?;
        Ok(Self { kubernetes, etcd })
    }

    /// `36` for `v1.36.3`.
    fn kubernetes_minor(&self) -> Result<&str> {
        self.kubernetes
            .split('.')
            .nth(1)
            .filter(|m| !m.is_empty())
            .with_context(|| format!("cannot read the minor of `{}`", self.kubernetes))
    }
}

/// Finds `module vX.Y.Z` in a go.mod `require` line or block.
pub(crate) fn require_version(go_mod: &Path, module: &str) -> Result<String> {
    let text =
        fs::read_to_string(go_mod).with_context(|| format!("reading {}", go_mod.display()))?;
    for line in text.lines() {
        let line = line.trim();
        let line = line.strip_prefix("require ").unwrap_or(line);
        let mut words = line.split_whitespace();
        if words.next() == Some(module)
            && let Some(version) = words.next()
            && version.starts_with('v')
        {
            return Ok(version.to_string());
        }
    }
    bail!("{} does not require {module}", go_mod.display())
}

/// The cached binaries of one version.
#[derive(Debug, Clone)]
pub struct Binaries {
    pub kube_apiserver: PathBuf,
    pub kube_controller_manager: PathBuf,
    pub kube_scheduler: PathBuf,
    pub etcd: PathBuf,
    /// KWOK and its stages (see `KWOK`), which the members run beside the scheduler.
    pub kwok: PathBuf,
    pub kwok_stages: PathBuf,
}

/// One binary to build: where, what, how it is stamped and how `--version` proves it.
pub(crate) struct Component {
    /// The cached binary's file name.
    pub(crate) name: &'static str,
    pub(crate) module: &'static str,
    pub(crate) package: &'static str,
    pub(crate) ldflags: String,
    /// What `<binary> <version_args>` must print (on its first line).
    pub(crate) expect_version: String,
    /// How the binary prints its version (`--version`, or Karmada's `version` subcommand).
    pub(crate) version_args: &'static [&'static str],
    /// Human version for messages and the stamp.
    pub(crate) version: String,
    /// A rough cold-build estimate for the progress message.
    pub(crate) estimate: &'static str,
}

fn components(v: &Versions) -> Result<Vec<Component>> {
    let minor = v.kubernetes_minor()?;
    let mut k8s_ldflags = String::from("-s -w");
    for pkg in [
        "k8s.io/component-base/version",
        "k8s.io/client-go/pkg/version",
    ] {
        k8s_ldflags.push_str(&format!(
            " -X {pkg}.gitVersion={kv} -X {pkg}.gitMajor=1 -X {pkg}.gitMinor={minor} \
             -X {pkg}.gitTreeState=clean -X {pkg}.buildDate=1970-01-01T00:00:00Z",
            kv = v.kubernetes
        ));
    }
    Ok(vec![
        Component {
            name: "etcd",
            module: "etcd",
            package: ".",
            ldflags: "-s -w".into(),
            expect_version: format!("etcd Version: {}", v.etcd.trim_start_matches('v')),
            version_args: &["--version"],
            version: v.etcd.clone(),
            estimate: "about 2 minutes",
        },
        Component {
            name: "kube-apiserver",
            module: "kube-apiserver",
            package: ".",
            ldflags: k8s_ldflags.clone(),
            expect_version: format!("Kubernetes {}", v.kubernetes),
            version_args: &["--version"],
            version: v.kubernetes.clone(),
            estimate: "10–20 minutes on 2 cores",
        },
        Component {
            name: "kube-controller-manager",
            module: "kube-apiserver",
            package: "k8s.io/kubernetes/cmd/kube-controller-manager",
            ldflags: k8s_ldflags.clone(),
            expect_version: format!("Kubernetes {}", v.kubernetes),
            version_args: &["--version"],
            version: v.kubernetes.clone(),
            estimate: "about 5 more minutes",
        },
        // Not a `tool` line in the wrapper's go.mod: that would change the inputs hash of the
        // two binaries above and rebuild them. Every package it imports is already in the
        // wrapper's go.sum (`go list -mod=readonly -deps`), so it builds from them unchanged.
        Component {
            name: "kube-scheduler",
            module: "kube-apiserver",
            package: "k8s.io/kubernetes/cmd/kube-scheduler",
            ldflags: k8s_ldflags,
            expect_version: format!("Kubernetes {}", v.kubernetes),
            version_args: &["--version"],
            version: v.kubernetes.clone(),
            estimate: "a minute or two more",
        },
    ])
}

/// Everything that determines a binary: a change to any of it invalidates the stamp.
pub(crate) fn inputs_hash(c: &Component) -> Result<String> {
    let dir = paths::go_module_dir(c.module);
    let mut hash = Fnv64::new();
    for part in [c.name, c.package, c.ldflags.as_str(), c.version.as_str()] {
        hash.write(part.as_bytes());
        hash.write(&[0]);
    }
    for file in ["go.mod", "go.sum", "main.go"] {
        let path = dir.join(file);
        // A wrapper that only names upstream mains (`tool` lines) has no main.go.
        if file == "main.go" && !path.exists() {
            continue;
        }
        let bytes = fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        hash.write(file.as_bytes());
        hash.write(&bytes);
        hash.write(&[0]);
    }
    Ok(format!("{:016x}", hash.finish()))
}

/// FNV-1a, 64 bit: a stable content hash for stamps (std's hasher is not stable across
/// releases).
struct Fnv64(u64);

impl Fnv64 {
    fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) fn stamp_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.stamp"))
}

pub(crate) fn stamp_matches(dir: &Path, c: &Component, hash: &str) -> bool {
    let Ok(text) = fs::read_to_string(stamp_path(dir, c.name)) else {
        return false;
    };
    let has = |key: &str, value: &str| text.lines().any(|l| l == format!("{key}={value}"));
    has("version", &c.version) && has("inputs", hash) && dir.join(c.name).is_file()
}

/// Checks `go` is on PATH and new enough; returns its version string.
pub fn check_go() -> Result<String> {
    let out = Command::new("go")
        .args(["env", "GOVERSION"])
        .env("GOTOOLCHAIN", "local")
        .output();
    let out = match out {
        Ok(out) if out.status.success() => out,
        Ok(out) => bail!(
            "{GO_MISSING}\n(`go env GOVERSION` failed: {})",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(err) => bail!("{GO_MISSING}\n(cannot run `go`: {err})"),
    };
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let mut nums = version
        .trim_start_matches("go")
        .split(['.', '-', ' '])
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let found = (nums.next().unwrap_or(0), nums.next().unwrap_or(0));
    if found < MIN_GO {
        bail!("{GO_MISSING}\n(found {version})");
    }
    Ok(version)
}

/// Whom a build runs for. `cargo xtask test` builds in the background while cargo prints and
/// the tiers' servers run: there every line carries `BACKGROUND_PREFIX`, `go` runs under
/// `nice` (it takes the cores the others leave idle) and the build stops when `stop` is set.
#[derive(Debug, Clone, Copy)]
pub enum Mode<'a> {
    Foreground,
    Background { stop: &'a AtomicBool },
}

/// What begins every line a background build prints, so it stands out from cargo's.
pub const BACKGROUND_PREFIX: &str = "[go] ";

/// How long an interrupted `go build` gets to finish the compiles under way and clean up.
const INTERRUPT_GRACE: Duration = Duration::from_secs(30);

impl Mode<'_> {
    fn say(self, line: std::fmt::Arguments<'_>) {
        match self {
            Mode::Foreground => say!("{line}"),
            Mode::Background { .. } => {
                use std::io::IsTerminal as _;
                // Cargo redraws its progress bar on the terminal's last line: clear it first.
                let clear = if std::io::stdout().is_terminal() && std::io::stderr().is_terminal() {
                    "\r\x1b[K"
                } else {
                    ""
                };
                say!("{clear}{BACKGROUND_PREFIX}{line}");
            }
        }
    }

    fn stopped(self) -> bool {
        matches!(self, Mode::Background { stop } if stop.load(Ordering::Relaxed))
    }

    fn go(self) -> Command {
        match self {
            Mode::Foreground => Command::new("go"),
            Mode::Background { .. } => {
                let mut cmd = Command::new("nice");
                cmd.args(["-n", "10", "go"]);
                cmd
            }
        }
    }
}

/// Makes sure all binaries are cached, building what is missing or out of date.
pub fn ensure_built(v: &Versions) -> Result<Binaries> {
    ensure_built_as(v, Mode::Foreground)
}

/// `ensure_built` for `mode`.
pub fn ensure_built_as(v: &Versions, mode: Mode<'_>) -> Result<Binaries> {
    let dir = paths::cache_dir(&v.kubernetes)?;
    ensure_components(&dir, &components(v)?, mode)?;
    let kwok = KWOK.ensure_built_as(&KWOK.version()?, mode)?;
    Ok(Binaries {
        kwok: kwok.exe("kwok"),
        kwok_stages: kwok.manifests().join(KWOK_STAGES),
        kube_apiserver: dir.join("kube-apiserver"),
        kube_controller_manager: dir.join("kube-controller-manager"),
        kube_scheduler: dir.join("kube-scheduler"),
        etcd: dir.join("etcd"),
    })
}

/// Builds every component of `comps` whose stamp in `dir` does not match its inputs.
pub(crate) fn ensure_components(dir: &Path, comps: &[Component], mode: Mode<'_>) -> Result<()> {
    let mut go_version = None;
    for c in comps {
        let hash = inputs_hash(c)?;
        if stamp_matches(dir, c, &hash) {
            continue;
        }
        let go = match &go_version {
            Some(go) => go,
            None => go_version.insert(check_go()?),
        };
        build_one(dir, c, &hash, go, mode)?;
    }
    Ok(())
}

/// `GOFLAGS` for every `go` command: ours first, then whatever the caller exported (so
/// `GOFLAGS=-p=1 cargo xtask testenv build` keeps a core free on a shared machine).
pub(crate) fn goflags() -> String {
    let mut flags = String::from("-mod=mod -buildvcs=false");
    if let Some(extra) = std::env::var_os("GOFLAGS") {
        let extra = extra.to_string_lossy();
        if !extra.trim().is_empty() {
            flags.push(' ');
            flags.push_str(extra.trim());
        }
    }
    flags
}

/// How one hub's binaries and manifests are built and cached: the wrapper module
/// (`xtask/go/<wrapper>`, also the cache directory `~/.cache/flotilla/testenv/<wrapper>-<release>/`),
/// the upstream module whose release it pins, the binaries, and the manifests copied from the
/// same module (`manifests/`, stamped like a binary). Karmada's and OCM's are below, KubeFed's
/// in `kubefed.rs`.
pub struct HubBuild {
    /// How messages name the hub, e.g. `Karmada`.
    pub name: &'static str,
    /// What `testenv build` says it cached.
    pub cached: &'static str,
    pub(crate) wrapper: &'static str,
    pub(crate) module: &'static str,
    /// The binaries of a release.
    pub(crate) components: fn(&str) -> Vec<Component>,
    /// Lines the manifests stamp holds besides `version=<release>` (a change re-copies them).
    pub(crate) manifests_format: &'static [&'static str],
    /// What must exist under `manifests/`.
    pub(crate) manifests_files: &'static [&'static str],
    /// Fills the future `manifests/` (second argument) from the module's source (first) of a
    /// release (third); returns the rest of the stamp and what to say about the copy.
    pub(crate) copy_manifests: fn(&Path, &Path, &str) -> Result<(String, String)>,
}

/// The cached binaries and manifests of one hub release (see `HubBuild`).
#[derive(Debug, Clone)]
pub struct HubBinaries(PathBuf);

impl HubBinaries {
    /// The cached binary `name` (a `Component::name`).
    pub fn exe(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    pub fn manifests(&self) -> PathBuf {
        self.0.join("manifests")
    }

    pub fn dir(&self) -> &Path {
        &self.0
    }
}

impl HubBuild {
    /// The release the wrapper pins, e.g. `v1.18.2`.
    pub fn version(&self) -> Result<String> {
        require_version(
            &paths::go_module_dir(self.wrapper).join("go.mod"),
            self.module,
        )
    }

    fn dir(&self, version: &str) -> Result<PathBuf> {
        paths::cache_dir(&format!("{}-{version}", self.wrapper))
    }

    /// Makes sure the binaries and manifests of `version` are cached.
    pub fn ensure_built(&self, version: &str) -> Result<HubBinaries> {
        self.ensure_built_as(version, Mode::Foreground)
    }

    /// `ensure_built` for `mode`.
    pub fn ensure_built_as(&self, version: &str, mode: Mode<'_>) -> Result<HubBinaries> {
        let dir = self.dir(version)?;
        ensure_components(&dir, &(self.components)(version), mode)?;
        if !self.manifests_stamped(&dir, version) {
            check_go()?;
            self.copy_manifests_into(&dir, version, mode)?;
        }
        Ok(HubBinaries(dir))
    }

    fn manifests_stamped(&self, dir: &Path, version: &str) -> bool {
        fs::read_to_string(stamp_path(dir, "manifests")).is_ok_and(|t| {
            let has = |want: &str| t.lines().any(|l| l == want);
            has(&format!("version={version}")) && self.manifests_format.iter().all(|l| has(l))
        }) && self
            .manifests_files
            .iter()
            .all(|f| dir.join("manifests").join(f).exists())
    }

    /// Copies the manifests into `dir/manifests` (atomically, then the stamp).
    fn copy_manifests_into(&self, dir: &Path, version: &str, mode: Mode<'_>) -> Result<()> {
        let src = module_source(self.wrapper, self.module, version)?;
        let partial = dir.join(format!(".manifests.partial-{}", std::process::id()));
        if partial.exists() {
            fs::remove_dir_all(&partial)?;
        }
        fs::create_dir_all(&partial)?;
        let (stamp, message) = (self.copy_manifests)(&src, &partial, version)?;
        let target = dir.join("manifests");
        if target.exists() {
            fs::remove_dir_all(&target)?;
        }
        fs::rename(&partial, &target)?;
        fs::write(
            stamp_path(dir, "manifests"),
            format!("component=manifests\nversion={version}\n{stamp}"),
        )?;
        mode.say(format_args!("testenv: {message}"));
        Ok(())
    }
}

/// Reads a module-cache file and writes it to `to` (not `fs::copy`: module-cache files are
/// read-only).
pub(crate) fn copy_file(from: &Path, to: &Path) -> Result<()> {
    let text = fs::read(from).with_context(|| format!("reading {}", from.display()))?;
    fs::write(to, text).with_context(|| format!("writing {}", to.display()))
}

/// The source directory of `module@version` in the module cache, downloaded through the
/// wrapper module `wrapper` (so its go.sum vouches for it).
fn module_source(wrapper: &str, module: &str, version: &str) -> Result<PathBuf> {
    let out = Command::new("go")
        .args(["mod", "download", "-json", &format!("{module}@{version}")])
        .current_dir(paths::go_module_dir(wrapper))
        .env("GOTOOLCHAIN", "local")
        .env("GOFLAGS", goflags())
        .stdin(Stdio::null())
        .output()
        .context("running `go mod download`")?;
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).with_context(|| {
        format!(
            "`go mod download -json {module}@{version}` printed no JSON: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )
    })?;
    if let Some(err) = info.get("Error").and_then(serde_json::Value::as_str) {
        bail!("downloading {module}@{version}: {err}");
    }
    let dir = info
        .get("Dir")
        .and_then(serde_json::Value::as_str)
        .with_context(|| format!("`go mod download` gave no directory for {module}@{version}"))?;
    Ok(PathBuf::from(dir))
}

/// The Karmada module; its release is pinned by `xtask/go/karmada/go.mod`.
const KARMADA_MODULE: &str = "github.com/karmada-io/karmada";

/// Karmada's four components, with the CRDs (in the order of the module's kustomization),
/// `crd-patches/` and `webhook-configuration.yaml` as manifests.
pub const KARMADA: HubBuild = HubBuild {
    name: "Karmada",
    cached: "components and manifests",
    wrapper: "karmada",
    module: KARMADA_MODULE,
    components: karmada_components,
    manifests_format: &[],
    manifests_files: &["webhook-configuration.yaml"],
    copy_manifests: copy_karmada_manifests,
};

fn karmada_components(kv: &str) -> Vec<Component> {
    let ldflags = format!("-s -w -X {KARMADA_MODULE}/pkg/version.gitVersion={kv}");
    let one = |name: &'static str, package: &'static str, estimate: &'static str| Component {
        name,
        module: "karmada",
        package,
        ldflags: ldflags.clone(),
        expect_version: format!("GitVersion:\"{kv}\""),
        version_args: &["version"],
        version: kv.to_string(),
        estimate,
    };
    vec![
        one(
            "karmada-controller-manager",
            "github.com/karmada-io/karmada/cmd/controller-manager",
            "15–20 minutes on 2 cores",
        ),
        one(
            "karmada-aggregated-apiserver",
            "github.com/karmada-io/karmada/cmd/aggregated-apiserver",
            "a few more minutes",
        ),
        one(
            "karmada-scheduler",
            "github.com/karmada-io/karmada/cmd/scheduler",
            "a minute or two",
        ),
        one(
            "karmada-webhook",
            "github.com/karmada-io/karmada/cmd/webhook",
            "a minute or two",
        ),
    ]
}

/// Copies what the test environment installs from the Karmada module: the CRDs listed by
/// `charts/karmada/_crds/kustomization.yaml` (numbered in its order), its two conversion
/// patches and `artifacts/deploy/webhook-configuration.yaml`.
fn copy_karmada_manifests(src: &Path, partial: &Path, kv: &str) -> Result<(String, String)> {
    let crds_src = src.join("charts/karmada/_crds");
    let kustomization = fs::read_to_string(crds_src.join("kustomization.yaml"))
        .with_context(|| format!("reading the CRD list of {KARMADA_MODULE}@{kv}"))?;
    fs::create_dir_all(partial.join("crds"))?;
    fs::create_dir_all(partial.join("crd-patches"))?;
    let (mut crds, mut patches) = (0, 0);
    for line in kustomization.lines() {
        let line = line.trim();
        if let Some(rel) = line.strip_prefix("- bases/") {
            let file = Path::new(rel)
                .file_name()
                .with_context(|| format!("odd CRD entry `{line}`"))?;
            crds += 1;
            let to = partial
                .join("crds")
                .join(format!("{crds:02}-{}", file.to_string_lossy()));
            copy_file(&crds_src.join("bases").join(rel), &to)?;
        } else if let Some(rel) = line.strip_prefix("- path: patches/") {
            patches += 1;
            copy_file(
                &crds_src.join("patches").join(rel),
                &partial.join("crd-patches").join(rel),
            )?;
        }
    }
    if crds == 0 {
        bail!(
            "no CRDs listed in {}",
            crds_src.join("kustomization.yaml").display()
        );
    }
    copy_file(
        &src.join("artifacts/deploy/webhook-configuration.yaml"),
        &partial.join("webhook-configuration.yaml"),
    )?;
    Ok((
        format!("crds={crds}\ncrd_patches={patches}\n"),
        format!(
            "copied {crds} Karmada CRDs, {patches} CRD patches and the webhook configuration from {KARMADA_MODULE}@{kv}"
        ),
    ))
}

fn build_one(dir: &Path, c: &Component, hash: &str, go: &str, mode: Mode<'_>) -> Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    fs::create_dir_all(paths::logs_dir())?;
    let log_path = paths::logs_dir().join(format!("build-{}.log", c.name));
    let log =
        fs::File::create(&log_path).with_context(|| format!("creating {}", log_path.display()))?;
    let partial = dir.join(format!(".{}.partial-{}", c.name, std::process::id()));
    // `go`'s work directory, ours to remove: an interrupted `go build` leaves its own behind.
    let go_tmp = dir.join(format!(".go-tmp-{}", std::process::id()));
    fs::create_dir_all(&go_tmp).with_context(|| format!("creating {}", go_tmp.display()))?;
    let module_dir = paths::go_module_dir(c.module);

    mode.say(format_args!(
        "testenv: building {} {} with {go} into {} (cold build takes {}; later runs reuse the cache) log: {}",
        c.name,
        c.version,
        dir.display(),
        c.estimate,
        paths::display(&log_path)
    ));
    let started = Instant::now();
    let mut child = mode
        .go()
        .args(["build", "-trimpath", "-ldflags", &c.ldflags, "-o"])
        .arg(&partial)
        .arg(c.package)
        .current_dir(&module_dir)
        .env("GOTOOLCHAIN", "local")
        .env("GOFLAGS", goflags())
        .env("CGO_ENABLED", "0")
        .env("GOTMPDIR", &go_tmp)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()
        .with_context(|| format!("starting `go build` in {}", module_dir.display()))?;
    let mut next_report = 60;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if mode.stopped() {
            interrupt(&mut child);
            let _ = fs::remove_file(&partial);
            let _ = fs::remove_dir_all(&go_tmp);
            bail!("stopped building {}: the run ended", c.name);
        }
        std::thread::sleep(Duration::from_millis(500));
        let secs = started.elapsed().as_secs();
        if secs >= next_report {
            mode.say(format_args!(
                "testenv:   ... still building {} ({} min)",
                c.name,
                secs / 60
            ));
            next_report += 60;
        }
    };
    let _ = fs::remove_dir_all(&go_tmp);
    if !status.success() {
        let _ = fs::remove_file(&partial);
        bail!(
            "building {} failed ({status}); last lines of {}:\n{}",
            c.name,
            log_path.display(),
            crate::procs::tail(&log_path, 25)
        );
    }
    let out = Command::new(&partial)
        .args(c.version_args)
        .output()
        .with_context(|| format!("running {} --version", partial.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let printed = stdout.lines().next().unwrap_or_default().trim().to_string();
    if !printed.contains(&c.expect_version) {
        let _ = fs::remove_file(&partial);
        bail!(
            "the freshly built {} says `{}`, expected `{}`: version stamping failed",
            c.name,
            stdout.trim(),
            c.expect_version
        );
    }
    let target = dir.join(c.name);
    fs::rename(&partial, &target)
        .with_context(|| format!("moving the built {} into place", c.name))?;
    let secs = started.elapsed().as_secs_f64();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let stamp = format!(
        "component={}\nversion={}\ninputs={hash}\ngo={go}\nbuilt_unix={now}\nbuild_seconds={secs:.0}\nreports={}\n",
        c.name,
        c.version,
        printed.trim()
    );
    let stamp_tmp = dir.join(format!(".{}.stamp.partial-{}", c.name, std::process::id()));
    let mut f = fs::File::create(&stamp_tmp)?;
    f.write_all(stamp.as_bytes())?;
    f.sync_all()?;
    fs::rename(&stamp_tmp, stamp_path(dir, c.name))?;
    mode.say(format_args!(
        "testenv: built {} ({}) in {:.0} s",
        c.name,
        printed.trim(),
        secs
    ));
    Ok(())
}

/// Stops a `go build`: an interrupt lets it finish the compiles under way and remove its work
/// directory; one that outlives `INTERRUPT_GRACE` is killed.
fn interrupt(child: &mut Child) {
    crate::procs::interrupt(child);
    let deadline = Instant::now() + INTERRUPT_GRACE;
    while Instant::now() < deadline {
        if !matches!(child.try_wait(), Ok(None)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The Open Cluster Management module; its release is pinned by `xtask/go/ocm/go.mod`.
const OCM_MODULE: &str = "open-cluster-management.io/ocm";

/// How the OCM manifests are prepared (in the stamp: a change re-copies them).
const OCM_MANIFESTS_FORMAT: &str = "format=crds-without-conversion-webhook";

/// OCM's binaries — `registration controller` (hub: accepts clusters, their RBAC, the default
/// sets), `placement controller` (hub: PlacementDecisions), `work manager` (hub: the
/// ManifestWorkReplicaSet controller) and `registration-operator agent` (the klusterlet:
/// registration and work agents in one) — with `hub-crds/` and `member-crds/` as manifests.
pub const OCM: HubBuild = HubBuild {
    name: "OCM",
    cached: "components and CRDs",
    wrapper: "ocm",
    module: OCM_MODULE,
    components: ocm_components,
    manifests_format: &[OCM_MANIFESTS_FORMAT],
    manifests_files: &["hub-crds", "member-crds"],
    copy_manifests: copy_ocm_manifests,
};

fn ocm_components(ov: &str) -> Vec<Component> {
    let ldflags = format!("-s -w -X {OCM_MODULE}/pkg/version.versionFromGit={ov}");
    let one = |name: &'static str, package: &'static str, estimate: &'static str| Component {
        name,
        module: "ocm",
        package,
        ldflags: ldflags.clone(),
        // cobra's `--version`: `<command> version <version>`.
        expect_version: format!("version {ov}"),
        version_args: &["--version"],
        version: ov.to_string(),
        estimate,
    };
    vec![
        one(
            "ocm-registration-operator",
            "open-cluster-management.io/ocm/cmd/registration-operator",
            "15–25 minutes on 2 cores",
        ),
        one(
            "ocm-registration",
            "open-cluster-management.io/ocm/cmd/registration",
            "a minute or two",
        ),
        one(
            "ocm-placement",
            "open-cluster-management.io/ocm/cmd/placement",
            "a minute or two",
        ),
        // Not a `tool` line in the wrapper's go.mod: that would change the inputs hash of
        // every OCM binary above and rebuild them all. Every package `cmd/work` imports is
        // already a dependency of the three mains above (`go list -deps`), so it builds from
        // the same go.mod and go.sum unchanged (and `go mod tidy` keeps what it needs).
        one(
            "ocm-work",
            "open-cluster-management.io/ocm/cmd/work",
            "a few minutes on 2 cores",
        ),
    ]
}

/// A CRD without its `spec.conversion` block. OCM's add-on CRDs are templates the
/// cluster-manager operator fills in with its add-on webhook (`{{ .AddonAPIServiceCABundle }}`);
/// no add-on manager runs here, so they get the default conversion (`None`) instead. Text
/// without such a block is returned unchanged.
fn without_conversion_webhook(crd: &str) -> String {
    let mut out = String::with_capacity(crd.len());
    let mut skipping = false;
    for line in crd.lines() {
        if line == "  conversion:" {
            skipping = true;
            continue;
        }
        if skipping {
            let indent = line.len() - line.trim_start().len();
            if indent > 2 {
                continue;
            }
            skipping = false;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Copies the CRDs the test environment installs from the OCM module: the hub's
/// (`manifests/cluster-manager/hub/crds/`) and the managed clusters'
/// (`manifests/klusterlet/managed/*crd.yaml`).
fn copy_ocm_manifests(src: &Path, partial: &Path, ov: &str) -> Result<(String, String)> {
    let mut counts = Vec::new();
    for (from, to) in [
        ("manifests/cluster-manager/hub/crds", "hub-crds"),
        ("manifests/klusterlet/managed", "member-crds"),
    ] {
        let from = src.join(from);
        let to = partial.join(to);
        fs::create_dir_all(&to)?;
        let mut n = 0;
        for entry in fs::read_dir(&from).with_context(|| format!("reading {}", from.display()))? {
            let path = entry?.path();
            let name = path.file_name().map(|n| n.to_string_lossy().to_string());
            let Some(name) = name.filter(|n| n.ends_with("crd.yaml")) else {
                continue;
            };
            let text =
                fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
            let text = without_conversion_webhook(&text);
            if text.contains("{{") {
                bail!(
                    "{} is a template beyond its conversion webhook: upstream changed shape",
                    path.display()
                );
            }
            fs::write(to.join(&name), text)?;
            n += 1;
        }
        if n == 0 {
            bail!("no CRDs in {} of {OCM_MODULE}@{ov}", from.display());
        }
        counts.push(n);
    }
    let [hub, member] = counts[..] else {
        bail!("expected two CRD directories");
    };
    Ok((
        format!("{OCM_MANIFESTS_FORMAT}\nhub_crds={hub}\nmember_crds={member}\n"),
        format!("copied {hub} hub CRDs and {member} managed-cluster CRDs from {OCM_MODULE}@{ov}"),
    ))
}

/// The KWOK module; its release is pinned by `xtask/go/kwok/go.mod`.
const KWOK_MODULE: &str = "sigs.k8s.io/kwok";
/// The wrapper module's directory name under `xtask/go/` (and the cache's prefix).
const KWOK_WRAPPER: &str = "kwok";
/// The cached stages file under `manifests/`.
pub const KWOK_STAGES: &str = "stages.yaml";
/// The module's kustomization whose stages KWOK runs: nodes turn Ready at once and keep a
/// lease, pods turn Running and Ready at once, complete when they are a Job's, go when deleted.
const KWOK_STAGE_SET: &str = "kustomize/stage/fast";
/// How the stages file is made (in the stamp: a change regenerates it).
const KWOK_STAGES_FORMAT: &str = "format=stage-fast-concatenated";

/// KWOK's binary and its stages, cached in `~/.cache/flotilla/testenv/kwok-<release>/`.
pub const KWOK: HubBuild = HubBuild {
    name: "KWOK",
    cached: "binary and lifecycle stages",
    wrapper: KWOK_WRAPPER,
    module: KWOK_MODULE,
    components: kwok_components,
    manifests_format: &[KWOK_STAGES_FORMAT],
    manifests_files: &[KWOK_STAGES],
    copy_manifests: write_kwok_stages,
};

fn kwok_components(version: &str) -> Vec<Component> {
    let bare = version.trim_start_matches('v');
    vec![Component {
        name: "kwok",
        module: KWOK_WRAPPER,
        package: "sigs.k8s.io/kwok/cmd/kwok",
        ldflags: format!("-s -w -X {KWOK_MODULE}/pkg/consts.Version={bare}"),
        // cobra's `--version`: `kwok version v0.8.0 …`.
        expect_version: bare.to_string(),
        version_args: &["--version"],
        version: version.to_string(),
        estimate: "about 2 minutes on 2 cores",
    }]
}

/// The stage files a kustomization lists, in its order, following listed directories.
fn kwok_stage_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let path = dir.join("kustomization.yaml");
    let text = fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let mut in_resources = false;
    for line in text.lines() {
        if !line.starts_with([' ', '-']) {
            in_resources = line.trim_end() == "resources:";
            continue;
        }
        let Some(entry) = line.trim().strip_prefix("- ").filter(|_| in_resources) else {
            continue;
        };
        let target = dir.join(entry.trim());
        if target.is_dir() {
            kwok_stage_files(&target, out)?;
        } else {
            out.push(target);
        }
    }
    Ok(())
}

/// Writes the stages of `KWOK_STAGE_SET` as one multi-document file (KWOK's `--config`).
fn write_kwok_stages(src: &Path, partial: &Path, version: &str) -> Result<(String, String)> {
    let mut files = Vec::new();
    kwok_stage_files(&src.join(KWOK_STAGE_SET), &mut files)?;
    if files.is_empty() {
        bail!("{KWOK_MODULE}@{version} lists no stages in {KWOK_STAGE_SET}/kustomization.yaml");
    }
    let mut text = String::new();
    for file in &files {
        let stage =
            fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        if !stage.contains("kind: Stage") {
            bail!(
                "{} is not a KWOK Stage: upstream changed shape",
                file.display()
            );
        }
        text.push_str("---\n");
        text.push_str(stage.trim_end());
        text.push('\n');
    }
    fs::write(partial.join(KWOK_STAGES), text)?;
    Ok((
        format!("{KWOK_STAGES_FORMAT}\nstages={}\n", files.len()),
        format!(
            "wrote {} KWOK stages from {KWOK_MODULE}@{version}/{KWOK_STAGE_SET}",
            files.len()
        ),
    ))
}

/// SIG Multicluster's cluster inventory API; its version is pinned by
/// `xtask/go/cluster-inventory/go.mod` and nowhere else.
const CLUSTER_INVENTORY_MODULE: &str = "sigs.k8s.io/cluster-inventory-api";

/// The ClusterProfile CRD the plain tier installs on its hub, as `manifests/clusterprofiles.crd.yaml`;
/// no binaries (consumers are what is tested, and flotilla is the consumer).
pub const CLUSTER_INVENTORY: HubBuild = HubBuild {
    name: "cluster-inventory-api",
    cached: "ClusterProfile CRD",
    wrapper: "cluster-inventory",
    module: CLUSTER_INVENTORY_MODULE,
    components: |_| Vec::new(),
    manifests_format: &[],
    manifests_files: &[CLUSTER_PROFILE_CRD],
    copy_manifests: copy_cluster_profile_crd,
};

/// The CRD's file under the cached `manifests/`.
pub const CLUSTER_PROFILE_CRD: &str = "clusterprofiles.crd.yaml";

fn copy_cluster_profile_crd(src: &Path, partial: &Path, version: &str) -> Result<(String, String)> {
    let from = src.join("config/crd/bases/multicluster.x-k8s.io_clusterprofiles.yaml");
    copy_file(&from, &partial.join(CLUSTER_PROFILE_CRD))?;
    Ok((
        String::new(),
        format!("copied the ClusterProfile CRD from {CLUSTER_INVENTORY_MODULE}@{version}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_come_from_the_wrapper_modules() {
        let v = Versions::from_wrappers().expect("wrapper go.mod files");
        assert!(v.kubernetes.starts_with("v1."), "{v:?}");
        assert!(v.etcd.starts_with("v3."), "{v:?}");
        assert!(!v.kubernetes_minor().expect("minor").is_empty());
    }

    #[test]
    fn a_crds_conversion_webhook_template_is_dropped() {
        let crd = "spec:\n  conversion:\n    strategy: Webhook\n    webhook:\n      clientConfig:\n        caBundle: {{ .AddonAPIServiceCABundle }}\n      conversionReviewVersions:\n      - v1\n  group: addon.open-cluster-management.io\n  versions:\n  - name: v1alpha1\n";
        assert_eq!(
            without_conversion_webhook(crd),
            "spec:\n  group: addon.open-cluster-management.io\n  versions:\n  - name: v1alpha1\n"
        );
        assert_eq!(without_conversion_webhook("a: b\n"), "a: b\n");
    }

    #[test]
    fn a_kwok_kustomization_is_followed_in_order_through_its_directories() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path();
        fs::create_dir_all(root.join("set")).expect("mkdir");
        fs::create_dir_all(root.join("node")).expect("mkdir");
        fs::write(
            root.join("set/kustomization.yaml"),
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- ../node\n- own.yaml\n",
        )
        .expect("write");
        fs::write(
            root.join("node/kustomization.yaml"),
            "resources:\n- a.yaml\n- b.yaml\nlabels:\n- pairs: {x: y}\n",
        )
        .expect("write");
        let mut files = Vec::new();
        kwok_stage_files(&root.join("set"), &mut files).expect("follow");
        let names: Vec<String> = files
            .iter()
            .map(|f| f.file_name().expect("name").to_string_lossy().to_string())
            .collect();
        assert_eq!(names, ["a.yaml", "b.yaml", "own.yaml"]);
    }

    #[test]
    fn fnv_is_stable() {
        let mut h = Fnv64::new();
        h.write(b"a");
        assert_eq!(h.finish(), 0xaf63_dc4c_8601_ec8c);
    }
}
