//! The real binary in a pseudo-terminal: it opens, shows the fleet, quits on `q` with status 0,
//! and leaves the terminal as it found it, also when ended by a signal (status 130 or 143) or
//! by a bad fleet file found while the fleet loads (status 2, the error on the screen) or a hub
//! that does not answer (status 3).

mod harness;

use harness::{FleetDir, PtyApp};

const DEMO_CLUSTERS: [&str; 14] = [
    "prod-eu-west-1",
    "prod-eu-west-2",
    "prod-us-east-1",
    "prod-us-east-2",
    "prod-ap-south-1",
    "staging-eu-west-1",
    "staging-us-east-1",
    "dev-eu-west-1",
    "gpu-us-east-1",
    "edge-store-0001",
    "edge-store-0002",
    "edge-store-0003",
    "batch-ap-south-1",
    "lab-eu-west-1",
];

fn clusters_named(screen: &str) -> usize {
    DEMO_CLUSTERS
        .iter()
        .filter(|name| screen.contains(*name))
        .count()
}

/// The terminal was put back: alternate screen left, cursor shown, raw mode no longer drawing.
fn assert_restored(app: &PtyApp) {
    let raw = String::from_utf8_lossy(&app.raw);
    let entered = raw
        .rfind("\x1b[?1049h")
        .expect("the console used the alternate screen");
    let left = raw
        .rfind("\x1b[?1049l")
        .expect("the alternate screen was left");
    assert!(
        left > entered,
        "the alternate screen was left after it was entered"
    );
    assert!(
        !app.parser.screen().alternate_screen(),
        "back on the main screen"
    );
    assert!(
        !app.parser.screen().hide_cursor(),
        "the cursor is visible again"
    );
}

#[test]
fn demo_opens_shows_the_fleet_and_quits_cleanly() {
    let mut app = PtyApp::spawn(&["demo"], 200, 50, &[]);
    let resources = [
        "shop/checkout",
        "shop/inventory",
        "payments/ledger",
        "monitoring/node-exporter",
    ];
    let resources_named = |screen: &str| {
        resources
            .iter()
            .filter(|name| screen.contains(*name))
            .count()
    };
    // Wait for the whole first frame: it can arrive in several reads.
    let screen = app.wait_for("12 cluster names and 3 resource names", |s| {
        clusters_named(s) >= 12 && resources_named(s) >= 3
    });
    assert!(screen.contains("Clusters"), "{screen}");
    assert!(screen.contains("Federated resources"), "{screen}");
    // The simulated clusters answer: health arrives live after the first frame.
    app.wait_for("a Ready cluster and the unreachable one", |s| {
        s.contains("Ready") && s.contains("Unreachable")
    });
    app.send("q");
    assert_eq!(app.wait_exit(), 0, "q exits with status 0");
    assert_restored(&app);
}

#[test]
fn help_lists_the_live_key_map() {
    let mut app = PtyApp::spawn(&["demo"], 120, 40, &[]);
    app.wait_for("the console", |s| s.contains("Clusters"));
    app.send("?");
    app.wait_for("the help overlay with the quit key", |s| {
        s.contains("Help") && s.contains("quit flotilla") && s.contains("filter the focused pane")
    });
    app.send("?");
    app.wait_for("help closed", |s| !s.contains("quit flotilla"));
    app.send("q");
    assert_eq!(app.wait_exit(), 0);
}

#[test]
fn a_bad_fleet_file_found_while_loading_ends_the_console_naming_it_with_status_2() {
    let fleet = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/fleets/invalid/bad-selector-operator"
    );
    let mut app = PtyApp::spawn(
        &["--fleet", fleet, "console"],
        400,
        30,
        &[("KUBECONFIG", "/nonexistent/kubeconfig")],
    );
    assert_eq!(app.wait_exit(), 2, "a bad fleet file is an input error");
    assert_restored(&app);
    let screen = app.screen_text();
    assert!(
        screen.contains("policy.yaml:16")
            && screen.contains("unknown selector operator `Equals`")
            && screen.contains("use In, NotIn, Exists or DoesNotExist"),
        "the file, line, what is wrong and the fix, on the restored screen:\n{screen}"
    );
}

#[test]
fn a_hub_that_does_not_answer_ends_the_console_with_status_3_and_says_why() {
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: closed\n  cluster: {server: 'https://127.0.0.1:1'}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: hub\n  context: {cluster: closed, user: u}\n",
    )
    .expect("kubeconfig");
    let kubeconfig = kubeconfig.to_string_lossy().into_owned();
    let mut app = PtyApp::spawn(
        &["--kubeconfig", &kubeconfig, "--hub", "hub", "console"],
        400,
        30,
        &[],
    );
    assert_eq!(
        app.wait_exit(),
        3,
        "a hub that did not answer counts as a failed cluster"
    );
    assert_restored(&app);
    let screen = app.screen_text();
    assert!(
        screen.contains("error: --hub hub: cannot reach the hub"),
        "{screen}"
    );
    assert!(!screen.contains("token: t"), "{screen}");
}

#[test]
fn sigterm_restores_the_terminal() {
    let mut app = PtyApp::spawn(&["demo"], 100, 30, &[]);
    app.wait_for("the console", |s| s.contains("Clusters"));
    let pid = app.pid().expect("child pid");
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success());
    assert_eq!(
        app.wait_exit(),
        143,
        "SIGTERM ends the console with 128 + 15"
    );
    assert_restored(&app);
}

#[test]
fn sigint_restores_the_terminal() {
    let mut app = PtyApp::spawn(&["demo"], 100, 30, &[]);
    app.wait_for("the console", |s| s.contains("Clusters"));
    let pid = app.pid().expect("child pid");
    std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .expect("run kill");
    assert_eq!(app.wait_exit(), 130, "SIGINT ends the console with 128 + 2");
    assert_restored(&app);
}

#[test]
fn filtering_to_one_cluster_shows_only_it() {
    let mut app = PtyApp::spawn(&["demo"], 200, 50, &[]);
    app.wait_for("the console", |s| clusters_named(s) >= 12);
    app.send("/");
    app.send("gpu-us");
    app.send("\r");
    app.wait_for("only the gpu cluster", |s| {
        clusters_named(s) == 1 && s.contains("gpu-us-east-1") && s.contains("Clusters (1 of 14)")
    });
    app.send("\x1b");
    app.wait_for("the filter cleared", |s| clusters_named(s) >= 12);
    app.send("q");
    assert_eq!(app.wait_exit(), 0);
}

#[test]
fn resizing_to_tiny_and_back_never_crashes() {
    let mut app = PtyApp::spawn(&["demo"], 200, 50, &[]);
    app.wait_for("the console", |s| clusters_named(s) >= 12);
    for (cols, rows) in [(40, 12), (10, 3), (80, 24), (40, 12), (200, 50)] {
        app.resize_to(cols, rows);
        std::thread::sleep(std::time::Duration::from_millis(150));
        assert!(app.is_alive(), "flotilla died at {cols}x{rows}");
    }
    app.wait_for("the full screen again", |s| clusters_named(s) >= 12);
    app.send("q");
    assert_eq!(app.wait_exit(), 0);
}

/// Every SGR sequence that sets a foreground or background colour.
fn colour_escapes(raw: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(raw);
    let mut found = Vec::new();
    let mut rest = text.as_ref();
    while let Some(start) = rest.find("\x1b[") {
        let after = &rest[start + 2..];
        let end = after
            .find(|c: char| !(c.is_ascii_digit() || c == ';'))
            .unwrap_or(after.len());
        if after[end..].starts_with('m') {
            let params: Vec<&str> = after[..end].split(';').collect();
            let sets_colour = params.iter().any(|p| {
                matches!(
                    p.parse::<u16>(),
                    Ok(30..=37 | 38 | 40..=47 | 48 | 90..=97 | 100..=107)
                )
            });
            if sets_colour {
                found.push(after[..end].to_string());
            }
        }
        rest = &after[end.min(after.len())..];
    }
    found
}

#[test]
fn no_color_emits_no_colour_escapes() {
    let mut app = PtyApp::spawn(&["demo"], 160, 40, &[("NO_COLOR", "1")]);
    app.wait_for("the console", |s| {
        clusters_named(s) >= 12 && s.contains("Unreachable")
    });
    app.send("?");
    app.wait_for("help", |s| s.contains("quit flotilla"));
    app.send("q");
    app.send("q");
    assert_eq!(app.wait_exit(), 0);
    let colours = colour_escapes(&app.raw);
    assert!(
        colours.is_empty(),
        "colour escapes under NO_COLOR: {colours:?}"
    );
    // The same run with colour does emit them, so the check can fail.
    let mut coloured = PtyApp::spawn(&["demo"], 160, 40, &[]);
    coloured.wait_for("the console", |s| clusters_named(s) >= 12);
    coloured.send("q");
    coloured.wait_exit();
    assert!(!colour_escapes(&coloured.raw).is_empty());
}

#[test]
fn watch_demo_shows_tiles_heatmap_and_problems_and_ignores_other_keys() {
    let mut app = PtyApp::spawn(&["watch", "--demo"], 200, 50, &[]);
    let screen = app.wait_for("the wall display with health in", |s| {
        s.contains("FLOTILLA WATCH")
            && s.contains("Fleet heatmap")
            && s.contains("cluster edge-store-0003")
    });
    for tile in [
        "CLUSTERS",
        "Ready",
        "NotReady",
        "Unreachable",
        "CELLS",
        "InSync",
        "Drifted",
        "Failed",
        "Pending",
        "HEALTH",
        "Healthy",
        "Degraded",
        "Progressing",
    ] {
        assert!(screen.contains(tile), "tile {tile} missing:\n{screen}");
    }
    assert!(screen.contains("Top problems"), "{screen}");
    assert!(screen.contains("read-only"), "{screen}");
    // Console keys do nothing here: no filter prompt, no palette, no help.
    app.send("/:?s");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let after = app.screen_text();
    assert!(
        !after.contains("filter clusters") && !after.contains("Help"),
        "{after}"
    );
    for (cols, rows) in [(40, 12), (12, 4), (200, 50)] {
        app.resize_to(cols, rows);
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(app.is_alive(), "watch died at {cols}x{rows}");
    }
    app.wait_for("the full wall again", |s| {
        s.contains("Fleet heatmap") && s.contains("Top problems")
    });
    // A console key the wall refuses is answered where the operator looks: in its title.
    app.send("x");
    app.wait_for("exec refused, said on the wall", |s| {
        s.lines()
            .next()
            .is_some_and(|title| title.contains("exec is refused here"))
    });
    app.send("L");
    app.wait_for("the log pane refused, said on the wall", |s| {
        s.lines()
            .next()
            .is_some_and(|title| title.contains("no cell to read logs of"))
    });
    app.send("q");
    assert_eq!(app.wait_exit(), 0);
    assert_restored(&app);
}

#[test]
fn watch_survives_sighup_and_draws_ascii() {
    let mut app = PtyApp::spawn(&["watch", "--demo", "--ascii"], 120, 40, &[]);
    app.wait_for("the wall display", |s| s.contains("Fleet heatmap"));
    let pid = app.pid().expect("child pid");
    std::process::Command::new("kill")
        .args(["-HUP", &pid.to_string()])
        .status()
        .expect("run kill");
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(app.is_alive(), "a wall display outlives SIGHUP");
    app.wait_for("drawn in ASCII", |s| s.contains("Fleet heatmap"));
    app.resize_to(300, 90);
    app.wait_for("the wall at 300x90", |s| {
        s.lines().count() >= 90 && s.contains("Top problems")
    });
    let foreign: Vec<u8> = app.raw.iter().copied().filter(|b| *b >= 0x80).collect();
    assert!(
        foreign.is_empty(),
        "--ascii wrote {} bytes above 0x7f",
        foreign.len()
    );
    app.send("q");
    assert_eq!(app.wait_exit(), 0);
}

#[test]
fn demo_draws_only_ascii_at_80x24_and_200x60() {
    let mut app = PtyApp::spawn(&["demo", "--ascii"], 80, 24, &[]);
    app.wait_for("the console with its clusters answering", |s| {
        s.contains("Clusters") && clusters_named(s) >= 3 && s.contains("Unreachable")
    });
    // The Detail over the panes, and the help with its legend of every glyph.
    app.send("i");
    app.wait_for("the Detail overlay", |s| s.contains("Detail"));
    app.send("i");
    app.send("?");
    app.wait_for("the help's legend", |s| s.contains("danger-class cluster"));
    app.send("?");
    app.wait_for("the help closed", |s| !s.contains("danger-class cluster"));
    app.resize_to(200, 60);
    app.wait_for("every cluster at 200x60", |s| {
        clusters_named(s) >= 12 && s.lines().next().is_some_and(|l| l.trim_end().len() > 100)
    });
    app.send("?");
    app.wait_for("the help at 200x60", |s| s.contains("danger-class cluster"));
    app.send("?");
    let screen = app.wait_for("help closed", |s| !s.contains("danger-class cluster"));
    assert!(
        screen.contains("+-") && screen.contains('|'),
        "panes keep their borders, drawn in ASCII:\n{screen}"
    );
    let foreign = app.raw.iter().filter(|b| **b >= 0x80).count();
    assert_eq!(foreign, 0, "demo --ascii wrote {foreign} bytes above 0x7f");
    app.send("q");
    assert_eq!(app.wait_exit(), 0);
    assert_restored(&app);
}

/// Rows of the wall's count band (above the heat map) with large digits in them: runs of
/// blocks, `█` or `#` in ASCII, four or more wide.
fn digit_band_rows(screen: &str) -> usize {
    screen
        .lines()
        .take_while(|line| !line.contains("Fleet heatmap"))
        .filter(|line| line.contains("████") || line.contains("||####"))
        .count()
}

/// From across a room: at 300×90 the counts are large digits, well over five rows tall (the
/// band's three sparkline rows aside); and space turns the heat map's page, as the title says.
#[test]
fn watch_draws_large_counts_at_300x90_and_space_turns_the_page() {
    let mut app = PtyApp::spawn(&["watch", "--demo"], 300, 90, &[]);
    let screen = app.wait_for("the wall with its counts", |s| {
        s.contains("Fleet heatmap") && s.contains("Top problems") && digit_band_rows(s) > 0
    });
    assert!(
        digit_band_rows(&screen) >= 5 + 3,
        "digits fewer than five rows tall:\n{screen}"
    );
    app.send("q");
    assert_eq!(app.wait_exit(), 0);
    let mut app = PtyApp::spawn(
        &["watch", "--demo-scale", "3000,5", "--interval", "3600"],
        80,
        24,
        &[],
    );
    let first = app.wait_for("the first of several pages", |s| {
        header(s).contains("page 1/")
    });
    app.send(" ");
    app.wait_for("space turning to page 2", |s| header(s).contains("page 2/"));
    app.send(" ");
    app.wait_for("and to page 3", |s| header(s).contains("page 3/"));
    assert!(!first.contains("page 2/"));
    app.send("q");
    assert_eq!(app.wait_exit(), 0);
    assert_restored(&app);
}

#[test]
fn propagating_a_drifted_resource_in_the_demo_repairs_it() {
    let mut app = PtyApp::spawn(&["demo", "--demo-seed", "7"], 200, 50, &[]);
    app.wait_for("the drifted demo cell and every cluster probed", |s| {
        s.contains("~1 Drifted") && s.contains("Unreachable")
    });
    app.send("\t/inventory\r");
    app.wait_for("only shop/inventory", |s| {
        s.contains("Federated resources (1 of")
    });
    app.send("a");
    // Wait for the whole popup: a frame can arrive in several reads.
    app.wait_for("the confirmation naming the drifted prod cluster", |s| {
        s.contains("Propagate?")
            && s.contains("prod-us-east-2: Drifted")
            && s.contains("type prod-us-east-2")
    });
    app.send("y");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        app.screen_text().contains("~1 Drifted"),
        "y alone does not write"
    );
    app.send("\x7fprod-us-east-2\r");
    app.wait_for("the drift repaired by the simulated apply", |s| {
        !s.contains("Drifted")
    });
    app.send("q");
    assert_eq!(app.wait_exit(), 0);
}

/// The cells of the `nightly-report` row, after its dialect column.
fn nightly_report_cells(screen: &str) -> String {
    screen
        .lines()
        .find(|line| line.contains("batch/nightly-report"))
        .and_then(|line| line.split("karmada").nth(1))
        .map(|cells| cells.trim_start().chars().take(3).collect())
        .unwrap_or_default()
}

#[test]
fn editing_a_placement_previews_propagates_and_the_matrix_follows() {
    let mut app = PtyApp::spawn(&["demo"], 160, 45, &[]);
    app.wait_for("the fleet", |screen| clusters_named(screen) == 14);
    app.send("\t");
    app.send("/nightly\r");
    // The footer offers the editor once the filter is confirmed (not while it is typed).
    app.wait_for("the CronJob row alone, placed on batch only", |screen| {
        nightly_report_cells(screen) == "✓ ·"
            && !screen.contains("shop/checkout")
            && screen.contains("edit placement")
    });
    app.send("e");
    app.wait_for("the placement editor", |screen| {
        screen.contains("PropagationPolicy batch/batch-only") && screen.contains("env=batch")
    });
    app.send("\t");
    app.send("\x15"); // ctrl-u clears the selector
    app.send("env in (batch,dev)");
    app.wait_for("dev entering in the preview", |screen| {
        screen.contains("1 entering") && screen.contains("+ enters")
    });
    app.send("\r");
    app.wait_for("the review of the new object", |screen| {
        screen.contains("CronJob/batch/nightly-report on dev-eu-west-1")
            && screen.contains("+kind: CronJob")
    });
    app.send("\r");
    app.wait_for("the confirmation", |screen| {
        screen.contains("+ dev-eu-west-1 enters") && screen.contains("y propagate")
    });
    app.send("y");
    app.wait_for(
        "both cells in sync and the propagation reported",
        |screen| {
            nightly_report_cells(screen) == "✓ ✓"
                && screen.contains("propagation finished: 1 of 1 in sync")
        },
    );
    app.send("q");
    assert_eq!(app.wait_exit(), 0);
    assert_restored(&app);
}

#[test]
fn an_image_tag_override_previews_one_cluster_saves_and_the_cell_renders_it() {
    let mut app = PtyApp::spawn(&["demo"], 160, 45, &[]);
    app.wait_for("the fleet", |screen| clusters_named(screen) == 14);
    // The clusters pane has the focus: narrow it to one cluster, then the resources to checkout.
    app.send("/prod-eu-west-1\r");
    app.wait_for("one cluster left", |screen| clusters_named(screen) == 1);
    app.send("\t");
    app.send("/checkout\r");
    app.wait_for("the checkout rows, the filter confirmed", |screen| {
        screen.contains("shop/checkout")
            && !screen.contains("shop/inventory")
            && screen.contains("o overrides")
    });
    app.send("o");
    app.wait_for("the override editor on the cell", |screen| {
        screen.contains("Overrides of Deployment/shop/checkout · checked against prod-eu-west-1")
            && screen.contains("OverridePolicy shop/regional-registry")
    });
    app.send("i");
    app.wait_for("the image form", |screen| screen.contains("new image rule"));
    app.send("2.5.0\r");
    app.wait_for("the preview names the one cluster", |screen| {
        screen.contains("1 object(s) change on prod-eu-west-1")
    });
    app.send("\r");
    app.wait_for("the review of the changed image", |screen| {
        screen.contains("Deployment/shop/checkout on prod-eu-west-1")
            && screen.contains("+        image: eu.registry.example.com/shop/checkout:2.5.0")
    });
    app.send("\r");
    app.wait_for("the confirmation", |screen| {
        screen.contains("create OverridePolicy shop/z-flotilla-adopt-deployment-checkout")
            && screen.contains("type prod-eu-west-1 and enter to propagate")
    });
    // prod is a danger-class cluster: its name must be typed.
    app.send("prod-eu-west-1\r");
    app.wait_for("saved and propagated", |screen| {
        screen.contains("propagation finished: 1 of 1 in sync")
    });
    // The console now renders the cell from the saved fleet.
    app.send("\r");
    app.wait_for("the cell's object with the new tag", |screen| {
        screen.contains("image: eu.registry.example.com/shop/checkout:2.5.0")
    });
    app.send("\x1b");
    app.wait_for("back on the matrix", |screen| {
        screen.contains("Federated resources (2 of 18)")
    });
    app.send("q");
    assert_eq!(app.wait_exit(), 0);
    assert_restored(&app);
}

#[test]
fn the_drift_view_adopts_one_drift_reverts_another_and_the_matrix_follows() {
    // Seed 42: besides the scenario's replicas drift, the simulated fleet drifts
    // Deployment/shop/inventory's container on edge-store-0001 about 15 s in.
    let mut app = PtyApp::spawn(&["demo", "--demo-seed", "42"], 200, 50, &[]);
    app.wait_for("the drifted demo cell and every cluster probed", |s| {
        s.contains("~1 Drifted") && s.contains("Unreachable")
    });
    app.send("D");
    app.wait_for("the drift view with the scenario's field", |s| {
        s.contains("Drift · 1 field(s)")
            && s.contains("Deployment/shop/inventory  /spec/replicas")
            && s.contains("live 9")
            && s.contains("by kubectl-scale")
    });
    app.send("a");
    app.wait_for("the adopt confirmation listing the override", |s| {
        s.contains("Adopt? Nothing is written")
            && s.contains("kind: OverridePolicy")
            && s.contains("type prod-us-east-2")
    });
    app.send("y");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        app.screen_text().contains("~1 Drifted"),
        "y alone does not write to a danger-class cluster"
    );
    app.send("\x7fprod-us-east-2\r");
    app.wait_for("the adopted value saved and the cell in sync", |s| {
        s.contains("adopted 1 field(s): saved") && !s.contains("Drifted")
    });
    app.wait_for("the simulated drift on edge-store-0001", |s| {
        s.contains("Drift · 1 field(s)")
            && s.contains(
                "edge-store-0001  Deployment/shop/inventory  /spec/template/spec/containers/0",
            )
    });
    app.send("r");
    app.wait_for("the revert confirmation", |s| {
        s.contains("Revert? Nothing is written") && s.contains("y revert")
    });
    app.send("y");
    app.wait_for("the drift reverted by the simulated apply", |s| {
        s.contains("Drift · 0 field(s)") && !s.contains("Drifted")
    });
    app.send("\x1b");
    let screen = app.wait_for("the matrix again", |s| s.contains("Federated resources"));
    assert!(!screen.contains("Drifted"), "{screen}");
    app.send("q");
    assert_eq!(app.wait_exit(), 0);
    assert_restored(&app);
}

/// The header line of a screen.
fn header(screen: &str) -> &str {
    screen.lines().next().unwrap_or_default()
}

#[test]
fn ten_thousand_clusters_settle_and_every_key_changes_the_screen() {
    let mut app = PtyApp::spawn(&["demo", "--demo-scale", "10000,1000"], 250, 80, &[]);
    app.wait_for("the first frame, drawn while the fleet loads", |screen| {
        header(screen).contains("demo-scale 10000×1000")
    });
    // A hang guard for a debug build, not a timing budget (that is the console benchmark's).
    let settled = app.wait_for_within(
        "the fleet settled: every cluster probed, no cell Pending",
        std::time::Duration::from_secs(600),
        |screen| {
            let header = header(screen);
            header.contains("/10000 Ready")
                && !header.contains("loading")
                && !header.contains("Pending")
                && header.contains("InSync")
        },
    );
    assert!(header(&settled).contains("Unreachable"), "{settled}");
    let detail_cluster = |screen: &str| {
        screen
            .lines()
            .find_map(|line| line.split("cluster   ").nth(1))
            .and_then(|rest| rest.split_whitespace().next())
            .map(str::to_string)
    };
    let first = detail_cluster(&settled).expect("the detail names the selected cluster");
    app.send("j");
    let moved = app.wait_for("j selecting the next cluster", |screen| {
        detail_cluster(screen).is_some_and(|cluster| cluster != first)
    });
    let second = detail_cluster(&moved).unwrap_or_default();
    app.send("l");
    app.wait_for("l moving along the matrix", |screen| {
        detail_cluster(screen).is_some_and(|cluster| cluster != second)
    });
    app.send("/");
    app.wait_for("the filter prompt", |screen| {
        screen.contains("filter clusters /")
    });
    app.send("\x1b");
    app.wait_for("the filter closed", |screen| screen.contains("? help"));
    app.send("?");
    app.wait_for("the help from the live key map", |screen| {
        screen.contains("Help") && screen.contains("quit flotilla")
    });
    app.send("q");
    assert_eq!(app.wait_exit(), 0);
    assert_restored(&app);
}

/// A copy of the karmada-fidelity fleet with a kubeconfig that has no contexts (no cluster is
/// reached: only the fleet's files are edited).
fn fidelity_fleet() -> (FleetDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = FleetDir::copy_of("karmada-fidelity");
    let fleet = dir.path().to_path_buf();
    let kubeconfig = dir.beside("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n",
    )
    .expect("kubeconfig");
    (dir, fleet, kubeconfig)
}

/// Opens the placement editor on Deployment/shop/web, names east explicitly (so west
/// leaves), reviews and reaches the confirmation.
fn edit_web_up_to_the_confirmation(app: &mut PtyApp) {
    app.wait_for("the fleet", |screen| screen.contains("shop/web-data"));
    app.send("\t");
    app.send("/Deployment shop/web\r");
    app.wait_for("the web row alone", |screen| {
        screen.contains("resources: Deployment shop/web") && screen.contains("(1 of 11)")
    });
    app.send("e");
    app.wait_for("the placement editor", |screen| {
        screen.contains("PropagationPolicy shop/web") && screen.contains("[ ] east")
    });
    name_east_up_to_the_confirmation(app);
}

/// In the open placement editor on web: names east (so west leaves), reviews and reaches the
/// confirmation.
fn name_east_up_to_the_confirmation(app: &mut PtyApp) {
    app.send(" ");
    app.wait_for("east named", |screen| screen.contains("1 leaving"));
    app.send("\r");
    app.wait_for("the review", |screen| screen.contains("west leaves"));
    app.send("\r");
    app.wait_for("the confirmation", |screen| screen.contains("y propagate"));
}

#[test]
fn an_open_editor_never_overwrites_an_outside_edit_nor_replaces_a_shifted_document() {
    let (_dir, fleet, kubeconfig) = fidelity_fleet();
    let shop = fleet.join("shop.yaml");
    let fleet_arg = fleet.display().to_string();
    let kubeconfig_arg = kubeconfig.display().to_string();
    let env = [("KUBECONFIG", kubeconfig_arg.as_str())];
    let mut app = PtyApp::spawn(&["--fleet", &fleet_arg, "console"], 160, 45, &env);

    // The edited policy changes on disk while the confirmation is open: the save is refused,
    // the console says what changed there, and the outside change stays.
    edit_web_up_to_the_confirmation(&mut app);
    let theirs = std::fs::read_to_string(&shop)
        .expect("read")
        .replace("conflictResolution: Overwrite", "conflictResolution: Abort");
    std::fs::write(&shop, &theirs).expect("write");
    app.send("y");
    app.wait_for("the refusal, saying what changed on disk", |screen| {
        screen.contains("changed on disk since the editor opened")
            && screen.contains("+   conflictResolution: Abort")
            && screen.contains("y reload and edit again")
    });
    assert_eq!(std::fs::read_to_string(&shop).expect("read"), theirs);
    // Reloading reopens the editor on the file as it is now; the edit then keeps their change.
    app.send("y");
    app.wait_for("the editor again, on the reloaded file", |screen| {
        screen.contains("reloaded") && screen.contains("[ ] east")
    });
    name_east_up_to_the_confirmation(&mut app);
    app.send("y");
    app.wait_for("the confirmation closed", |screen| {
        !screen.contains("y propagate")
    });
    let saved = file_once(&shop, |text| text.contains("clusterNames: [east]"));
    assert!(saved.contains("conflictResolution: Abort"), "{saved}");
    assert!(saved.contains("clusterNames: [east]"), "{saved}");

    // A document prepended while the editor is open (a pull) shifts every index: the save still
    // replaces the policy, not whatever now sits where it was.
    edit_web_up_to_the_confirmation_again(&mut app);
    let pulled = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: pulled, namespace: shop}}\ndata: {{a: b}}\n---\n{}",
        std::fs::read_to_string(&shop).expect("read")
    );
    std::fs::write(&shop, &pulled).expect("write");
    app.send("y");
    app.wait_for("the confirmation closed", |screen| {
        !screen.contains("y propagate") && !screen.contains("changed on disk")
    });
    let saved = file_once(&shop, |text| !text.contains("clusterNames: [east]"));
    assert!(
        saved.starts_with("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: pulled"),
        "{saved}"
    );
    assert_eq!(
        saved.matches("kind: PropagationPolicy").count(),
        2,
        "{saved}"
    );
    assert!(
        saved.contains("kind: Deployment\nmetadata: {name: web, namespace: shop}"),
        "{saved}"
    );
    assert!(
        !saved.contains("clusterNames: [east]"),
        "east named again is east dropped: {saved}"
    );

    // `u` takes the last change back only while the policy is as flotilla left it.
    let touched = saved.replacen(
        "  propagateDeps: true\n",
        "  propagateDeps: true # reviewed\n",
        1,
    );
    assert_ne!(touched, saved);
    std::fs::write(&shop, &touched).expect("write");
    app.send("u");
    app.wait_for("the undo's confirmation", |screen| {
        screen.contains("undo: restore PropagationPolicy shop/web")
    });
    app.send("y");
    app.wait_for("the undo refused, saying what changed", |screen| {
        screen.contains("changed on disk") && screen.contains("# reviewed")
    });
    assert_eq!(std::fs::read_to_string(&shop).expect("read"), touched);
    app.send("n");
    app.wait_for("the prompt closed", |screen| {
        !screen.contains("changed on disk since")
    });
    app.send("q");
    assert_eq!(app.wait_exit(), 0);
    assert_restored(&app);
}

/// The file's text once `done` holds (the save is written as the confirmation closes; a notice
/// about it may already have given way to the propagation's), at most 10 s on.
fn file_once(path: &std::path::Path, done: impl Fn(&str) -> bool) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(path).expect("read");
        if done(&text) || std::time::Instant::now() > deadline {
            return text;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The editor on web again, whose policy now names east: un-naming it is the change.
fn edit_web_up_to_the_confirmation_again(app: &mut PtyApp) {
    app.send("e");
    app.wait_for("the placement editor", |screen| screen.contains("[x] east"));
    app.send(" ");
    app.wait_for("east un-named", |screen| screen.contains("1 entering"));
    app.send("\r");
    app.wait_for("the review", |screen| {
        screen.contains("Deployment/shop/web on west")
    });
    app.send("\r");
    app.wait_for("the confirmation", |screen| screen.contains("y propagate"));
}
