//! `flotilla render`: load a fleet (directory or the embedded demo), report input errors as
//! `file:line: field: message; hint`, and write the per-cluster objects as JSON, YAML or a
//! table. Exit codes: 0 ok, 2 input errors (after rendering the rest with --keep-going).

use std::io::Write;
use std::path::Path;

use super::scope::ResourceScope;
pub use crate::cli::OutputFormat;
use crate::engine::{self, SourceFile, render};
use crate::output::Table;
use crate::safe_text::printable;

/// Where the fleet comes from.
#[derive(Debug, Clone)]
pub enum FleetInput<'a> {
    /// A fleet directory on disk.
    Dir(&'a Path),
    /// Files already in memory (the embedded demo fleet, a synthetic fleet, tests).
    Files(Vec<SourceFile>),
}

/// Runs `flotilla render` and returns the exit code. Secret values are masked unless
/// `show_secrets` (`--show-secrets`).
#[allow(clippy::too_many_arguments)]
pub fn run_render(
    input: FleetInput<'_>,
    cluster_names: &[String],
    resources: &ResourceScope,
    format: OutputFormat,
    keep_going: bool,
    show_secrets: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let files = match input {
        FleetInput::Dir(dir) => match crate::fleet::dir::read_fleet_dir(dir) {
            Ok(files) => files,
            Err(message) => {
                let _ = writeln!(err, "error: {}", printable(&message.to_string(), true));
                return 2;
            }
        },
        FleetInput::Files(files) => files,
    };
    let (fleet, errors) = engine::load_fleet(&files);
    let fleet = if resources.is_everything() {
        fleet
    } else {
        fleet.narrowed(|row| resources.selects(&fleet, row))
    };
    // File names and values in the messages come from the fleet: never raw to the terminal.
    for e in &errors {
        let _ = writeln!(err, "{}", printable(&e.to_string(), true));
    }
    if !errors.is_empty() && !keep_going {
        let _ = writeln!(
            err,
            "{} error(s) in the fleet; nothing rendered (use --keep-going to render the rest)",
            errors.len()
        );
        return 2;
    }
    // Nothing can be placed without clusters: say where they come from rather than print an
    // empty matrix as if that were the fleet's intent.
    if fleet.clusters.is_empty() && !fleet.resources.is_empty() {
        let _ = writeln!(
            err,
            "note: the fleet declares no clusters, so nothing is placed\n  hint: declare clusters in the fleet directory (Karmada Cluster or KubeFed KubeFedCluster objects), or name kubeconfig contexts with --context GLOB"
        );
    }
    let mut clusters: Vec<usize> = Vec::new();
    if cluster_names.is_empty() {
        clusters.extend(0..fleet.clusters.len());
    }
    for name in cluster_names {
        match fleet.cluster_index(name) {
            Some(c) => clusters.push(c),
            None => {
                let known: Vec<&str> = fleet.clusters.iter().map(|c| c.name.as_str()).collect();
                let message = format!(
                    "error: {}",
                    super::scope::no_such("--cluster", name, "cluster", &known)
                );
                let _ = writeln!(err, "{}", printable(&message, false));
                return 2;
            }
        }
    }
    clusters.sort_unstable();
    clusters.dedup();
    let secret_values = if show_secrets {
        render::SecretValues::Shown
    } else {
        render::SecretValues::Masked
    };
    let written = match format {
        OutputFormat::Json => render::write_json(&fleet, &clusters, secret_values, out),
        OutputFormat::Yaml => render::write_yaml(&fleet, &clusters, secret_values, out),
        OutputFormat::Table | OutputFormat::Wide => {
            write_summary(&render::summary(&fleet, &clusters), out)
        }
        OutputFormat::Name => write_resource_names(&fleet, out),
        OutputFormat::JsonPath(template) => {
            write_templated(&fleet, &clusters, secret_values, &template, out)
        }
    };
    if let Err(e) = written {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            return if errors.is_empty() { 0 } else { 2 };
        }
        let _ = writeln!(err, "error: writing output: {e}");
        return 1;
    }
    if !errors.is_empty() {
        let _ = writeln!(
            err,
            "{} error(s) in the fleet; everything else was rendered (--keep-going)",
            errors.len()
        );
        return 2;
    }
    0
}

/// `render -o jsonpath=…`: the JSON contract, held whole (a template may look anywhere in it)
/// and templated.
fn write_templated(
    fleet: &engine::Fleet,
    clusters: &[usize],
    secret_values: render::SecretValues,
    template: &crate::output::jsonpath::Template,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mut json = Vec::new();
    render::write_json(fleet, clusters, secret_values, &mut json)?;
    let value: serde_json::Value = serde_json::from_slice(&json)?;
    out.write_all(template.render(&value).as_bytes())
}

/// `render -o name`: each federated resource the fleet holds, as `KIND/NS/NAME`, one a line.
fn write_resource_names(fleet: &engine::Fleet, out: &mut dyn Write) -> std::io::Result<()> {
    let mut table = Table::default();
    for resource in &fleet.resources {
        table.row(resource.target.display_key(), Vec::new());
    }
    table.write_names(out)
}

/// `flotilla --hub CONTEXT render`: the per-cluster objects the hub itself rendered (Karmada's
/// Works, OCM's ManifestWorks), in the same shapes as the offline render, on the `--cluster`
/// clusters, in the `-n` namespace, whose template's labels (OCM: the manifest's) match `-l`
/// (a Namespace is in no namespace: `-n` leaves it out); on KubeFed, which
/// keeps none, the engine's render of the hub's Federated objects, with a note saying so (a
/// field of the JSON and YAML, a line under the table). Exit 0; 2 for a bad context, or
/// after rendering the rest when some of the hub's Federated objects do not load in the
/// engine (each named on stderr); 3 when the hub cannot be read. Secret values are masked
/// unless `show_secrets`.
pub async fn run_hub(
    global: &crate::cli::GlobalArgs,
    context: &str,
    (cluster_names, resources): (&[String], &ResourceScope),
    show_secrets: bool,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    use crate::backend::hub;
    let read = async {
        let hub = hub::connect(global.kubeconfig.as_deref(), context, Default::default()).await?;
        let rendered = hub.rendered().await?;
        // `-l` matches the templates' labels (on OCM the manifests'), read only when asked.
        let labels = if resources.has_selector() {
            hub.template_labels().await?
        } else {
            hub::TemplateLabels::default()
        };
        Ok::<_, hub::HubError>((rendered, labels))
    };
    let (mut rendered, labels) = match read.await {
        Ok(read) => read,
        Err(err) => {
            eprintln!("error: {}", printable(&err.to_string(), true));
            return Ok(crate::cli::exit::of_hub(&err));
        }
    };
    let in_cluster = |cluster: &String| cluster_names.is_empty() || cluster_names.contains(cluster);
    let in_scope = |resource: &crate::model::ResourceRef| {
        resources.is_everything() || resources.matches(resource, labels.of(resource))
    };
    rendered.items.retain(|item| {
        in_cluster(&item.cluster)
            && in_scope(&crate::backend::fanout::object::resource_of(&item.object))
    });
    rendered
        .unplaced
        .retain(|item| in_cluster(&item.cluster) && in_scope(&item.resource));
    if !show_secrets {
        for item in &mut rendered.items {
            item.object = crate::engine::compare::secrets::mask(&item.object);
        }
    }
    for error in &rendered.errors {
        eprintln!("error: {}", printable(error, true));
    }
    crate::output::write(out, &global.output, &rendered, || {
        let mut table = Table::new(&["CLUSTER", "KIND", "NAMESPACE", "NAME", "API VERSION"])
            .wide_only(&["API VERSION"]);
        for item in &rendered.items {
            let field = |pointer: &str| item.object.pointer(pointer).and_then(|v| v.as_str());
            let (kind, namespace, name) = (
                field("/kind").unwrap_or("?"),
                field("/metadata/namespace"),
                field("/metadata/name").unwrap_or("?"),
            );
            let key = match namespace {
                Some(namespace) => format!("{kind}/{namespace}/{name}"),
                None => format!("{kind}/{name}"),
            };
            table.row(
                key,
                vec![
                    item.cluster.clone(),
                    kind.to_string(),
                    namespace.unwrap_or("-").to_string(),
                    name.to_string(),
                    field("/apiVersion").unwrap_or("?").to_string(),
                ],
            );
        }
        if let Some(note) = &rendered.note {
            table.footer(format!("note: {note}"));
        }
        table
    })?;
    if !rendered.errors.is_empty() {
        eprintln!(
            "{} of the hub's objects do not load in flotilla's engine; everything else was rendered",
            rendered.errors.len()
        );
        return Ok(crate::cli::exit::INPUT);
    }
    Ok(crate::cli::exit::OK)
}

/// Writes `render`'s summary through the commands' one table writer.
pub fn write_summary(summary: &render::Summary, out: &mut dyn Write) -> std::io::Result<()> {
    let titles: Vec<&str> = summary.header.iter().map(String::as_str).collect();
    let mut table = Table::new(&titles);
    for row in &summary.rows {
        table.row(row.first().cloned().unwrap_or_default(), row.clone());
    }
    for note in &summary.notes {
        table.footer(note.clone());
    }
    table.write(out, false)
}
