//! `L` in the real console in a pseudo-terminal, on the demo: the log pane streams the selected
//! cell's workload's lines (each named by cluster, pod and container), pause holds new lines
//! back and says how many, resuming lets them in, `/` finds a line and highlights it, `?` lists
//! the pane's keys from the key map, and esc closes it onto an intact console. Under
//! `--readonly` the pane opens (logs are reads); a kind without pods is refused, saying why.

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
    let highlighted = (0..40).any(|row| {
        let cells: Vec<_> = (0..160)
            .filter_map(|col| app.parser.screen().cell(row, col).cloned())
            .collect();
        let text: String = cells.iter().map(|c| c.contents()).collect();
        text.contains("cache refreshed")
            && cells
                .iter()
                .any(|c| c.inverse() || c.bgcolor() != vt100::Color::Default)
    });
    assert!(highlighted, "the matching line is highlighted: {screen}");

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
