//! `L` in the real console in a pseudo-terminal, on the demo: the log pane streams the selected
//! cell's workload's lines (each named by cluster, pod and container), pause holds new lines
//! back and says how many, resuming lets them in, `/` finds a line and highlights it, `?` lists
//! the pane's keys from the key map, and esc closes it onto an intact console. Under
//! `--readonly` the pane opens (logs are reads); a kind without pods is refused, saying why.
//! `t` shows and hides each line's time (the lines `flotilla logs --timestamps` prints), `o`
//! narrows to one container of a two-container pod, and `y` copies the match to the
//! terminal's clipboard as an OSC 52 sequence, under `NO_COLOR` too.

mod harness;

use harness::PtyApp;

/// The pane's status row: the one that counts its lines.
fn status(screen: &str) -> &str {
    screen
        .lines()
        .find(|line| {
            line.contains(" lines")
                && (line.contains("following") || line.contains("scrolled back"))
        })
        .unwrap_or("")
}

/// How many lines the pane shows, as its status says.
fn shown(screen: &str) -> usize {
    status(screen)
        .split(" · ")
        .find_map(|part| {
            part.trim_matches(|c: char| c == '│' || c.is_whitespace())
                .strip_suffix(" lines")?
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// How many lines a paused pane holds, as its marker says.
fn held(screen: &str) -> Option<usize> {
    let after = status(screen).split("paused, ").nth(1)?;
    after.split(' ').next()?.parse().ok()
}

#[test]
fn l_streams_pauses_resumes_searches_and_closes_onto_an_intact_console() {
    let mut app = PtyApp::spawn(&["demo"], 160, 40, &[]);
    app.select_inventory_on_the_edge();
    app.send("L");
    let screen = app.wait_for(
        "the pane with lines named by cluster, pod and container",
        |s| {
            s.contains("logs of Deployment/shop/inventory on edge-store-0001")
                && s.lines()
                    .any(|l| l.contains("edge-store-0001 inventory-") && l.contains("/api/v1/"))
                && shown(s) > 0
        },
    );
    assert!(status(&screen).contains("following"), "{screen}");

    // Paused, new lines are held, not shown.
    app.send(" ");
    let screen = app.wait_for("a paused pane holding a new line", |s| {
        held(s).is_some_and(|n| n > 0)
    });
    let kept = shown(&screen);
    let holding = held(&screen).unwrap_or(0);
    assert!(kept > 0, "{screen}");
    // Resumed, the held lines join the pane.
    app.send(" ");
    let screen = app.wait_for("the held lines in the pane", |s| {
        held(s).is_none() && shown(s) >= kept + holding
    });
    assert!(status(&screen).contains("following"), "{screen}");

    // A search finds the newest match and highlights it; following stops there.
    app.send("/cache refreshed\r");
    let screen = app.wait_for("the match, the search row gone", |s| {
        status(s).contains("/cache refreshed")
            && status(s).contains("scrolled back")
            && !s.contains("search: /")
    });
    assert!(
        highlighted_row(&app).is_some_and(|row| row.contains("cache refreshed")),
        "the matching line is highlighted: {screen}"
    );

    // The pane's keys come from the key map, in the help.
    app.send("?");
    app.wait_for("the pane's keys first", |s| {
        s.contains("In the log pane") && s.contains("pause reading into the pane")
    });
    app.send("?");

    // esc closes the pane and stops its streams; the console is whole again.
    app.send("\x1b");
    let screen = app.wait_for("the console again", |s| {
        s.contains("closed the logs of Deployment/shop/inventory") && s.contains("Clusters")
    });
    assert!(
        !screen.contains("logs of Deployment/shop/inventory on"),
        "{screen}"
    );
    assert!(screen.contains("shop/inventory"), "{screen}");
    assert!(
        !screen
            .lines()
            .any(|l| l.contains("edge-store-0001 inventory-")),
        "no log line is left on the screen: {screen}"
    );
    app.send("q");
    assert_eq!(app.wait_exit(), 0);
}

#[test]
fn readonly_opens_the_pane_and_a_kind_without_pods_is_refused() {
    let mut app = PtyApp::spawn(&["--readonly", "demo"], 160, 40, &[]);
    app.select_inventory_on_the_edge();
    app.send("L");
    app.wait_for("the pane, read-only", |s| {
        s.contains("logs of Deployment/shop/inventory") && shown(s) > 0
    });
    app.send("\x1b");
    app.wait_for("the console again", |s| s.contains("closed the logs of"));
    // The resources narrowed to Services: a Service has no pods of its own.
    app.send("/\x15\r");
    app.wait_for("every resource again", |s| s.contains("shop/checkout"));
    app.send(":kind Service\r");
    app.wait_for("only Services", |s| s.contains("kind: Service"));
    app.send("L");
    app.wait_for("the refusal", |s| s.contains("has no pods of its own"));
    app.send("q");
    assert_eq!(app.wait_exit(), 0);
}

/// The pane's log lines naming a pod of `workload` (`inventory`, `status-page`), without the
/// pane's border.
fn log_rows<'a>(screen: &'a str, workload: &str) -> Vec<&'a str> {
    let pod = format!(" {workload}-");
    screen
        .lines()
        .filter(|line| line.contains(&pod))
        .map(|line| line.trim_matches(|c: char| c == '│' || c.is_whitespace()))
        .collect()
}

/// A log row's container (its third word).
fn container(row: &str) -> &str {
    row.split_whitespace().nth(2).unwrap_or("")
}

/// The time a log row shows after its container, as `flotilla logs --timestamps` prints it.
fn stamp(row: &str) -> Option<k8s_openapi::jiff::Timestamp> {
    let word = row.split_whitespace().nth(3)?;
    // kubectl's fixed layout: nine fractional digits, UTC.
    (word.len() == 30 && word.ends_with('Z')).then_some(())?;
    word.parse().ok()
}

/// `flotilla logs` run beside the console, on the same simulated fleet.
fn logs_command(args: &[&str]) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .arg("logs")
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run flotilla logs");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// On the demo: selects web/status-page (two containers a pod: web and its proxy) on
/// prod-eu-west-1.
fn select_status_page(app: &mut PtyApp) {
    app.wait_for("the fleet", |s| s.contains("web/status-page"));
    app.send("/prod-eu-west-1\r");
    app.wait_for("the clusters filtered", |s| !s.contains("prod-eu-west-2"));
    app.send("\t/status-page\r");
    app.wait_for("the resources filtered", |s| !s.contains("shop/checkout"));
}

#[test]
fn timestamps_show_and_hide_and_the_pane_narrows_to_one_container() {
    let mut app = PtyApp::spawn(&["demo"], 160, 40, &[]);
    select_status_page(&mut app);
    app.send("L");
    let screen = app.wait_for("both containers' lines, without their times", |s| {
        let rows = log_rows(s, "status-page");
        s.contains("logs of Deployment/web/status-page on prod-eu-west-1")
            && rows.iter().any(|row| container(row) == "web")
            && rows.iter().any(|row| container(row) == "proxy")
    });
    assert!(
        log_rows(&screen, "status-page")
            .iter()
            .all(|row| stamp(row).is_none()),
        "{screen}"
    );
    // Paused, the lines in view stay put while the keys below change how they show.
    app.send(" ");
    let screen = app.wait_for("the pane paused", |s| held(s).is_some());
    let before = shown(&screen);

    // t: every line shows the time it was printed, as `flotilla logs --timestamps` does.
    app.send("t");
    let screen = app.wait_for("the lines with their times", |s| {
        status(s).contains("timestamps")
            && !log_rows(s, "status-page").is_empty()
            && log_rows(s, "status-page")
                .iter()
                .all(|row| stamp(row).is_some())
    });
    assert_eq!(
        shown(&screen),
        before,
        "the same lines, not read again: {screen}"
    );
    // The same lines, times and all, that the command prints: the demo's lines are a function
    // of pod, container and time, so an older line is in the command's tail too.
    let printed = logs_command(&[
        "--demo",
        "Deployment/web/status-page",
        "--cluster",
        "prod-eu-west-1",
        "--timestamps",
        "--tail",
        "100",
    ]);
    let oldest = log_rows(&screen, "status-page")[0].to_string();
    assert!(
        printed.lines().any(|line| line == oldest),
        "{oldest:?} is not among:\n{printed}"
    );

    app.send("t");
    app.wait_for("the lines without their times again", |s| {
        !status(s).contains("timestamps")
            && !log_rows(s, "status-page").is_empty()
            && log_rows(s, "status-page")
                .iter()
                .all(|row| stamp(row).is_none())
    });

    // o: only one container's lines, in the names' order (proxy, web), then every one.
    for only in ["proxy", "web"] {
        app.send("o");
        let screen = app.wait_for("one container's lines", |s| {
            let rows = log_rows(s, "status-page");
            status(s).contains(&format!("only container {only}"))
                && !rows.is_empty()
                && rows.iter().all(|row| container(row) == only)
        });
        assert!(
            screen.contains(&format!("logs: only container {only}")),
            "{screen}"
        );
    }
    app.send("o");
    app.wait_for("every container's lines again", |s| {
        let rows = log_rows(s, "status-page");
        !status(s).contains("only container")
            && rows.iter().any(|row| container(row) == "web")
            && rows.iter().any(|row| container(row) == "proxy")
    });

    // The new keys are the key map's, in the help.
    app.send("?");
    app.wait_for("the pane's new keys", |s| {
        s.contains("show or hide when each line was printed")
            && s.contains("show only the next container's lines")
            && s.contains("copy the search's match")
    });
    app.send("?");
    app.send("\x1b");
    app.wait_for("the console again", |s| s.contains("closed the logs of"));
    app.send("q");
    assert_eq!(app.wait_exit(), 0);
}

/// The row the pane highlights (the search's match), without the pane's border.
fn highlighted_row(app: &PtyApp) -> Option<String> {
    let screen = app.parser.screen();
    let (rows, cols) = screen.size();
    (0..rows.get()).find_map(|row| {
        let cells: Vec<_> = (0..cols.get())
            .filter_map(|col| screen.cell(row, col).cloned())
            .collect();
        let text: String = cells.iter().map(|c| c.contents()).collect();
        let marked = cells
            .iter()
            .any(|c| c.inverse() || c.bgcolor() != vt100::Color::Default);
        (marked && text.contains(" inventory-")).then(|| {
            text.trim_matches(|c: char| c == '│' || c.is_whitespace())
                .to_string()
        })
    })
}

/// The OSC 52 sequences the program wrote, decoded.
fn copies(raw: &[u8]) -> Vec<String> {
    use base64::Engine as _;
    let raw = String::from_utf8_lossy(raw);
    raw.split("\x1b]52;c;")
        .skip(1)
        .filter_map(|rest| {
            let encoded = rest.split(['\x07', '\x1b']).next()?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .ok()?;
            String::from_utf8(bytes).ok()
        })
        .collect()
}

#[test]
fn y_copies_the_match_to_the_terminals_clipboard_even_without_colour() {
    let mut app = PtyApp::spawn(&["demo"], 160, 40, &[("NO_COLOR", "1")]);
    app.select_inventory_on_the_edge();
    app.send("L");
    app.wait_for("the pane's lines", |s| !log_rows(s, "inventory").is_empty());
    app.send("/cache refreshed\r");
    app.wait_for("the match", |s| {
        status(s).contains("/cache refreshed") && !s.contains("search: /")
    });
    let matched = highlighted_row(&app).expect("the match is highlighted");
    assert!(matched.contains("cache refreshed"), "{matched}");
    assert!(copies(&app.raw).is_empty(), "nothing is copied before y");

    app.send("y");
    let said = format!("copied 1 line ({} bytes)", matched.len());
    let screen = app.wait_for("the copy said", |s| s.contains(&said));
    assert_eq!(copies(&app.raw), std::slice::from_ref(&matched), "{screen}");

    // With times shown, the copy is the line as shown, its time included.
    app.send("t");
    app.wait_for("the times", |s| {
        let rows = log_rows(s, "inventory");
        status(s).contains("timestamps")
            && !rows.is_empty()
            && rows.iter().all(|row| stamp(row).is_some())
    });
    let timed = highlighted_row(&app).expect("the match is still highlighted");
    assert!(stamp(&timed).is_some(), "{timed}\n{}", app.screen_text());
    app.send("y");
    app.wait_for("the second copy said", |s| {
        s.contains(&format!("copied 1 line ({} bytes)", timed.len()))
    });
    assert_eq!(copies(&app.raw), [matched, timed]);
    app.send("\x1b");
    app.wait_for("the console again", |s| s.contains("closed the logs of"));
    app.send("q");
    assert_eq!(app.wait_exit(), 0);
}
