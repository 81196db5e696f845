//! `flotilla logs KIND/NS/NAME`: the logs of a workload's pods on every placed cluster at once,
//! each line prefixed by cluster, pod and container (the cluster in its own colour unless
//! `NO_COLOR` or not a terminal), interleaved by the time the container printed it, or one JSON
//! object a line with `-o json`. Which pods are the workload's is `fanout::pods`'s; reading the
//! streams is `fanout::logs`'s; the order and the printed form are the engine's
//! (`engine::logs`). This file checks the input, prints, reports what could not be read on
//! stderr, and decides the exit code (0, 2 input error, 3 some clusters failed). It only reads.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};

use super::pods::{hub_of, scope_of};
use super::scope::{Clusters, InputError, Prepared, input_error, prepare_clusters};
use crate::backend::fanout::cluster_api::ClusterApi;
use crate::backend::fanout::logs::{
    LogEvent, LogProblem, LogRequest, PodLogs, StreamLimits, log_sources, stream_logs,
};
use crate::backend::fanout::pods::read_pods;
use crate::backend::fanout::targets::Options;
use crate::cli::{GlobalArgs, LogsArgs, exit};
use crate::engine::logs::{Style, cluster_colour, format_line, parse_since};
use crate::output::OutputFormat;
use crate::safe_text::printable;

/// Streams followed at once, at most: past it, narrow the selection (kubectl and stern refuse
/// similarly, as each is an open request to a cluster).
pub const MAX_FOLLOWED: usize = 200;

/// How `logs` prints.
#[derive(Debug, Clone, Copy)]
enum Form {
    Lines(Style),
    Json,
}

/// `flotilla logs`.
pub async fn run_logs(
    global: &GlobalArgs,
    args: &LogsArgs,
    out: &mut (dyn Write + Send),
) -> anyhow::Result<u8> {
    let form = match &global.output {
        OutputFormat::Table => Form::Lines(Style {
            colour: std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
            timestamps: args.timestamps,
        }),
        OutputFormat::Json => Form::Json,
        _ => {
            return Ok(input_error(
                "logs prints lines, or one JSON object a line with -o json; other -o formats do not apply",
            ));
        }
    };
    let since_seconds = match args.since.as_deref().map(parse_since).transpose() {
        Ok(since) => since,
        Err(message) => return Ok(input_error(&message)),
    };
    let scope = match scope_of(Some(&args.resource), &args.clusters, None) {
        Ok(scope) => scope,
        Err(InputError(message)) => return Ok(input_error(&message)),
    };
    let base = LogRequest {
        since_seconds,
        tail_lines: args.tail,
        follow: args.follow,
        previous: args.previous,
        ..LogRequest::default()
    };
    if let Some(context) = hub_of(global) {
        return match super::hub::prepared_members(global, &scope, context, "logs").await {
            Ok(prepared) => stream(prepared, args, &base, form, out).await,
            Err(code) => Ok(code),
        };
    }
    let prepared = match prepare_clusters(global, &scope, false).await {
        Ok(prepared) => prepared,
        Err(InputError(message)) => return Ok(input_error(&message)),
    };
    match prepared {
        Clusters::Live(prepared) => stream(prepared, args, &base, form, out).await,
        Clusters::Simulated(prepared) => stream(prepared, args, &base, form, out).await,
    }
}

async fn stream<A: ClusterApi + PodLogs>(
    prepared: Prepared<A>,
    args: &LogsArgs,
    base: &LogRequest,
    form: Form,
    out: &mut (dyn Write + Send),
) -> anyhow::Result<u8> {
    let targets = &prepared.targets;
    let workloads = read_pods(targets, Options::default(), &|_| true, "").await;
    if workloads.is_empty() {
        return Ok(input_error(&format!(
            "{}: no such workload in the fleet on the selected clusters\n  hint: `flotilla status` lists the fleet's resources and where they are placed",
            args.resource
        )));
    }
    let (sources, mut problems) = log_sources(&workloads, args.container.as_deref(), base);
    if args.follow && sources.len() > MAX_FOLLOWED {
        return Ok(input_error(&format!(
            "logs -f would follow {} containers (at most {MAX_FOLLOWED})\n  hint: narrow it with --cluster NAME or -c CONTAINER",
            sources.len()
        )));
    }
    let held: Vec<&str> = {
        let mut held: Vec<&str> = workloads
            .iter()
            .filter(|w| w.live.is_some())
            .map(|w| w.cluster.as_str())
            .collect();
        held.dedup();
        held
    };
    for workload in workloads
        .iter()
        .filter(|w| w.live.is_none() && w.error.is_none())
    {
        problems.push(LogProblem {
            cluster: workload.cluster.clone(),
            what: workload.resource.display_key(),
            reason: "not on the cluster".into(),
            failed: false,
        });
    }
    // Problems found before reading come first, on stderr, as they happen.
    let mut failed: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut report = |problem: &LogProblem| {
        eprintln!(
            "{}: {} {}: {}",
            if problem.failed { "error" } else { "note" },
            problem.cluster,
            problem.what,
            printable(&problem.reason, false)
        );
        if problem.failed {
            failed
                .entry(problem.cluster.clone())
                .or_default()
                .push(problem.what.clone());
        }
    };
    for problem in &problems {
        report(problem);
    }
    if sources.is_empty() && !held.is_empty() && problems.iter().all(|p| !p.failed) {
        eprintln!("note: no container to read logs from");
    }
    // A cluster's colour follows its place in the fleet's order.
    let colours: BTreeMap<&str, u8> = targets
        .iter()
        .enumerate()
        .map(|(index, target)| (target.cluster.as_str(), cluster_colour(index)))
        .collect();
    let apis: BTreeMap<&str, &A> = targets
        .iter()
        .filter_map(|target| Some((target.cluster.as_str(), target.api.as_ref().ok()?)))
        .collect();
    let mut write_error: Option<std::io::Error> = None;
    let mut emit = |event: LogEvent| match event {
        LogEvent::Line(line) => {
            if write_error.is_some() {
                return;
            }
            let written = match form {
                Form::Lines(style) => {
                    let colour = colours.get(line.cluster.as_str()).copied().unwrap_or(36);
                    writeln!(out, "{}", format_line(&line, colour, style))
                }
                Form::Json => match serde_json::to_string(&line) {
                    Ok(text) => writeln!(out, "{text}"),
                    Err(err) => Err(std::io::Error::other(err)),
                },
            };
            // Followed lines show as they come.
            if let Err(err) = written.and_then(|()| out.flush()) {
                write_error = Some(err);
            }
        }
        LogEvent::Problem(problem) => report(&problem),
    };
    stream_logs(
        &|cluster| apis.get(cluster).copied(),
        &sources,
        StreamLimits::default(),
        &mut emit,
    )
    .await;
    if let Some(err) = write_error {
        // A closed pipe (`| head`) ends the command quietly.
        if err.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(err.into());
        }
    }
    if failed.is_empty() {
        return Ok(exit::OK);
    }
    let summary: Vec<String> = failed
        .iter()
        .map(|(cluster, what)| format!("{cluster} ({})", what.join(", ")))
        .collect();
    eprintln!("error: could not read every log: {}", summary.join("; "));
    Ok(exit::PARTIAL)
}
