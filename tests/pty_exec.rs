//! `x` in the real console in a pseudo-terminal: it asks what to run in the selected cell's
//! pod, hands the terminal to the command (the main screen, a terminal of its own), and takes
//! it back intact (the alternate screen again, every pane drawn, the status line saying how
//! it ended); from the object view it runs in the pod chosen among those listed and returns
//! to the view; under `--readonly` it refuses, saying why.

mod harness;

use harness::PtyApp;

#[test]
fn x_runs_a_command_on_the_terminal_and_gives_back_an_intact_console() {
    let mut app = PtyApp::spawn(&["demo"], 160, 40, &[]);
    app.select_inventory_on_the_edge();
    app.send("x");
    app.wait_for("the prompt, sh by default", |s| {
        s.contains("exec in Deployment/shop/inventory on edge-store-0001 $ sh")
    });
    app.send("\r");
    // The command has the terminal: the main screen, and the simulated shell's prompt.
    app.wait_for("the shell's prompt", |s| s.contains(":/# "));
    assert!(!app.parser.screen().alternate_screen(), "the main screen");
    app.send("echo handed-over\r");
    app.wait_for("the command's answer", |s| {
        s.contains("\nhanded-over") || s.lines().any(|l| l.trim() == "handed-over")
    });
    app.send("exit 4\r");
    app.wait_for("the exit code and how to return", |s| {
        s.contains("[exit code 4] press enter to return to flotilla")
    });
    app.send("\r");
    let screen = app.wait_for("the console again, saying how it ended", |s| {
        s.contains("Clusters") && s.contains("exec sh on edge-store-0001: exit code 4")
    });
    assert!(
        app.parser.screen().alternate_screen(),
        "the alternate screen again"
    );
    assert!(screen.contains("shop/inventory"), "{screen}");
    assert!(
        !screen.contains("handed-over"),
        "every cell redrawn: {screen}"
    );
    // Keys are the console's again.
    app.send("?");
    app.wait_for("the help, with x in it", |s| {
        s.contains("run a command in a pod")
    });
    app.send("?");
    app.send("q");
    assert_eq!(app.wait_exit(), 0);
}

#[test]
fn x_in_the_object_view_runs_in_the_chosen_pod_and_returns_to_the_view() {
    let mut app = PtyApp::spawn(&["demo"], 160, 40, &[]);
    app.select_inventory_on_the_edge();
    app.send("\r");
    app.wait_for("the object view", |s| {
        s.contains("Deployment/shop/inventory on edge-store-0001 ·")
    });
    // The events view lists the pods once the cluster has answered.
    app.send("\t\t\t");
    app.wait_for("the pods listed", |s| s.contains(" inventory-"));
    app.send("x");
    let pod_of = |screen: &str| -> Option<String> {
        let rest = screen.split("exec in pod ").nth(1)?;
        Some(rest.split_whitespace().next()?.to_string())
    };
    let screen = app.wait_for("the prompt naming the pod", |s| pod_of(s).is_some());
    let first = pod_of(&screen).unwrap_or_default();
    assert!(first.starts_with("inventory-"), "{screen}");
    assert!(
        screen.contains("of Deployment/shop/inventory on edge-store-0001 $ sh"),
        "{screen}"
    );
    assert!(
        screen.contains("Deployment/shop/inventory on edge-store-0001 ·"),
        "the view stays under the prompt: {screen}"
    );
    // More than one pod: tab chooses the next, and the command runs in it.
    let chosen = if screen.contains("tab next pod (1/") {
        app.send("\t");
        let next = app.wait_for("the next pod", |s| {
            pod_of(s).is_some_and(|pod| pod != first)
        });
        pod_of(&next).unwrap_or_default()
    } else {
        first
    };
    app.send("\r");
    app.wait_for("the chosen pod's shell", |s| {
        s.contains(&format!("{chosen}:/# "))
    });
    app.send("exit 3\r");
    app.wait_for("the exit code", |s| s.contains("[exit code 3]"));
    app.send("\r");
    let screen = app.wait_for("the object view again, saying how it ended", |s| {
        s.contains("Deployment/shop/inventory on edge-store-0001 ·")
            && s.contains("exec sh on edge-store-0001: exit code 3")
    });
    assert!(screen.contains(&chosen), "its pods still listed: {screen}");
    app.send("q");
    assert_eq!(app.wait_exit(), 0);
}

#[test]
fn readonly_refuses_x_and_says_why() {
    let mut app = PtyApp::spawn(&["--readonly", "demo"], 160, 40, &[]);
    app.select_inventory_on_the_edge();
    app.send("x");
    app.wait_for("the refusal on the status line", |s| {
        s.contains("read-only: exec runs a command inside a pod")
    });
    assert!(
        app.parser.screen().alternate_screen(),
        "the console kept the terminal"
    );
    app.send("q");
    assert_eq!(app.wait_exit(), 0);
}
