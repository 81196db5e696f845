//! The placement editor driven headless on the demo fleet, as the console loop drives it (the
//! shared `harness::console` harness: keys through `update`, then the session's engine work).
//! It opens on the selected resource's policy, previews clusters entering and leaving with
//! reasons, shows bad selectors inline and refuses to go on, and only a confirmed review
//! produces the one effect that saves the edited document and propagates the changed cells.

mod harness;

use flotilla::app::action::Action;
use flotilla::app::state::Mode;
use flotilla::app::state::placement_editor::{Field, PlacementEditor, Stage, review_rows};
use flotilla::app::state::review::ReviewRow;
use flotilla::engine::edit::placement::Membership;
use flotilla::messages::{CellRef, Effect};
use harness::console::{Console, user_keymap};

/// The placement editor the console has open.
trait PlacementEditing {
    fn editor(&self) -> &PlacementEditor;
}

impl PlacementEditing for Console {
    fn editor(&self) -> &PlacementEditor {
        match &self.state.mode {
            Mode::Placement(editor) => editor,
            other => panic!("not in the placement editor: {other:?}"),
        }
    }
}

#[test]
fn widening_a_selector_previews_the_new_cluster_and_confirming_saves_and_propagates_it() {
    let mut console = Console::demo();
    let cronjob = console.select("CronJob/batch/nightly-report");
    console.keys("e");
    let editor = console.editor();
    let source = editor.source.as_ref().expect("the policy was found");
    assert_eq!(source.title, "PropagationPolicy batch/batch-only");
    assert!(
        source.file.ends_with("karmada-platform.yaml"),
        "{}",
        source.file
    );
    assert_eq!(editor.edit.selector, "env=batch");

    console.keys("<tab>");
    assert_eq!(console.editor().field, Field::Selector);
    console.keys("<ctrl-u>");
    console.type_text("env in (batch,dev)");
    let editor = console.editor();
    assert_eq!(editor.error, None);
    let preview = editor.preview.as_ref().expect("a preview");
    let entering: Vec<&str> = preview.entering().map(|c| c.cluster.as_str()).collect();
    assert_eq!(entering, ["dev-eu-west-1"]);
    let out = preview
        .clusters
        .iter()
        .find(|c| c.cluster == "prod-eu-west-1")
        .expect("every cluster has a row");
    let Membership::Out { reason } = &out.membership else {
        panic!("prod stays out: {out:?}");
    };
    assert!(
        reason.contains("env in (batch,dev)") || reason.contains("labelSelector"),
        "{reason}"
    );
    assert_eq!(preview.created, 1);

    // Reviewing asks the clusters for a server-side dry run of exactly the changed cells.
    let asked = console.keys("<enter>");
    let dev = console.cluster("dev-eu-west-1");
    let [
        Effect::DryRun {
            cells, revision, ..
        },
    ] = asked.as_slice()
    else {
        panic!("expected a dry-run request, got {asked:?}");
    };
    assert_eq!(
        cells.as_slice(),
        [CellRef {
            resource: cronjob as u32,
            cluster: dev as u32
        }]
    );
    let revision = *revision;
    let reviewing = |scroll, side_by_side| Stage::Reviewing {
        scroll,
        side_by_side,
    };
    assert_eq!(console.editor().stage, reviewing(0, false));
    // The review starts at the object's header; n jumps to its hunk, s shows both sides.
    console.keys("n");
    assert_eq!(console.editor().stage, reviewing(1, false));
    console.keys("s");
    assert_eq!(console.editor().stage, reviewing(1, true));
    console.keys("p");
    assert_eq!(console.editor().stage, reviewing(0, true));
    // The server's answer replaces the offline diff.
    let answer = flotilla::messages::PlanItem {
        cluster: "dev-eu-west-1".into(),
        resource: console.state.resources[cronjob].target.clone(),
        action: flotilla::messages::PlanAction::Create,
        diff: "+kind: CronJob\n".into(),
        message: String::new(),
        health: None,
    };
    console.act(Action::Backend(flotilla::messages::BackendEvent::DryRun {
        revision,
        items: vec![answer],
    }));
    let rows = review_rows(console.editor());
    assert!(
        rows.contains(&ReviewRow::Note(
            "server-side dry run: 1 of 1 cluster(s) answered".into()
        )),
        "{rows:?}"
    );
    assert!(
        rows.iter().any(|row| matches!(row, ReviewRow::Group(title)
            if title.ends_with("on dev-eu-west-1 · create"))),
        "{rows:?}"
    );
    assert!(console.keys("<enter>").is_empty(), "the review only asks");
    let Mode::Confirm(pending) = &console.state.mode else {
        panic!("expected the confirmation, got {:?}", console.state.mode);
    };
    assert!(
        pending
            .summary
            .iter()
            .any(|line| line.contains("+ dev-eu-west-1 enters"))
    );
    let (save, cells, delete) = console.confirm_document();
    assert!(delete.is_empty(), "an edit deletes nothing");
    assert_eq!(save.title, "PropagationPolicy batch/batch-only");
    assert_eq!(
        save.object
            .pointer("/spec/placement/clusterAffinity/labelSelector/matchExpressions/0/values"),
        Some(&serde_json::json!(["batch", "dev"]))
    );
    assert_eq!(
        cells.as_slice(),
        [CellRef {
            resource: cronjob as u32,
            cluster: dev as u32
        }]
    );
}

#[test]
fn a_bad_selector_is_shown_inline_and_nothing_goes_further() {
    let mut console = Console::demo();
    console.select("CronJob/batch/nightly-report");
    console.keys("e");
    console.keys("<tab>");
    console.type_text(",tier in web");
    let error = console.editor().error.clone().expect("an inline error");
    assert!(error.contains("parentheses"), "{error}");
    assert!(console.keys("<enter>").is_empty());
    assert_eq!(
        console.editor().stage,
        Stage::Editing,
        "no review with an error"
    );
    let notice = console.state.notice.clone().unwrap_or_default();
    assert!(notice.contains("fix the placement first"), "{notice}");
    assert!(console.keys("<esc>").is_empty());
    assert_eq!(console.state.mode, Mode::Normal);
}

#[test]
fn toggling_a_cluster_name_narrows_the_placement_and_says_why_others_leave() {
    let mut console = Console::demo();
    console.select("ConfigMap/shop/registry-config");
    console.keys("e");
    assert_eq!(console.editor().field, Field::Clusters);
    let prod = console.cluster("prod-eu-west-1");
    for _ in 0..prod {
        console.keys("<down>");
    }
    console.keys(" ");
    let editor = console.editor();
    assert!(editor.edit.clusters.contains("prod-eu-west-1"));
    let preview = editor.preview.as_ref().expect("a preview");
    assert!(preview.leaving().count() > 0, "{:?}", preview.clusters);
    for change in preview.leaving() {
        let Membership::Leaving { reason } = &change.membership else {
            unreachable!()
        };
        assert!(
            !reason.is_empty(),
            "{} leaves without a reason",
            change.cluster
        );
    }
    assert!(
        preview
            .clusters
            .iter()
            .any(|c| c.cluster == "prod-eu-west-1" && c.membership == Membership::Staying),
        "{:?}",
        preview.clusters
    );
    // Cancelling writes nothing.
    console.keys("<esc>");
    assert_eq!(console.state.mode, Mode::Normal);
}

#[test]
fn a_readonly_console_does_not_open_the_editor() {
    let mut console = Console::demo();
    console.state.readonly = true;
    console.select("CronJob/batch/nightly-report");
    assert!(console.keys("e").is_empty());
    assert_eq!(console.state.mode, Mode::Normal);
    assert!(
        console
            .state
            .notice
            .clone()
            .unwrap_or_default()
            .contains("read-only")
    );
}

#[test]
fn undo_puts_the_document_back_and_asks_before_deleting_what_the_change_created() {
    let mut console = Console::demo();
    assert!(console.keys("u").is_empty());
    assert!(
        console
            .state
            .notice
            .clone()
            .unwrap_or_default()
            .contains("nothing to undo")
    );

    let cronjob = console.select("CronJob/batch/nightly-report");
    console.keys("e");
    let original = console.editor().source.clone().expect("source").object;
    console.keys("<tab>");
    console.keys("<ctrl-u>");
    console.type_text("env in (batch,dev)");
    console.keys("<enter>");
    console.keys("<enter>");
    console.keys("y");
    let saved = std::mem::take(&mut console.state.edits);
    assert_eq!(saved.len(), 1, "the edit waits to be saved: {saved:?}");
    let dev = console.cluster("dev-eu-west-1");
    let created = CellRef {
        resource: cronjob as u32,
        cluster: dev as u32,
    };

    assert!(console.keys("u").is_empty(), "undo asks first");
    let Mode::Confirm(pending) = &console.state.mode else {
        panic!("expected the confirmation, got {:?}", console.state.mode);
    };
    assert!(
        pending
            .summary
            .iter()
            .any(|line| line.contains("CronJob/batch/nightly-report on dev-eu-west-1")),
        "{:?}",
        pending.summary
    );
    let (save, cells, delete) = console.confirm_document();
    assert_eq!(save.object, original, "the document goes back as it was");
    assert!(
        cells.is_empty(),
        "nothing the change updated needs re-applying"
    );
    assert_eq!(delete.as_slice(), [created]);
    assert!(
        console.state.last_change.is_none(),
        "an undo is not undone again"
    );
}

#[test]
fn divided_weights_typed_in_the_editor_show_each_clusters_replicas() {
    let mut console = Console::demo();
    console.select("Deployment/shop/checkout");
    console.keys("e");
    let editor = console.editor();
    assert!(
        editor
            .edit
            .replicas
            .starts_with("divided (weights by label or field selector"),
        "{}",
        editor.edit.replicas
    );
    // Untouched, the policy's selector-based weights are kept exactly.
    let source = editor.source.clone().expect("source");
    assert_eq!(source.with(&editor.edit), Ok(source.object.clone()));
    for _ in 0..4 {
        console.keys("<tab>");
    }
    assert_eq!(console.editor().field, Field::Replicas);
    console.keys("<ctrl-u>");
    console.type_text("divided prod-eu-west-1=3,prod-us-east-1=1");
    let editor = console.editor();
    assert_eq!(editor.error, None);
    let preview = editor.preview.as_ref().expect("a preview");
    let replicas = |name: &str| {
        preview
            .clusters
            .iter()
            .find(|c| c.cluster == name)
            .and_then(|c| c.replicas_after)
    };
    assert_eq!(replicas("prod-eu-west-1"), Some(9));
    assert_eq!(replicas("prod-us-east-1"), Some(3));
    assert!(
        preview.leaving().count() > 0,
        "prod clusters without a weight leave: {:?}",
        preview.clusters
    );
    console.keys("<ctrl-u>");
    console.type_text("divided prod-eu-west-1=0");
    let error = console.editor().error.clone().expect("an inline error");
    assert!(error.contains("above 0"), "{error}");
}

#[test]
fn propagating_in_waves_sends_the_canary_first_and_the_rest_once_it_is_in_sync() {
    use flotilla::messages::{BackendEvent, CellUpdate};
    use flotilla::model::CellStatus;

    let mut console = Console::demo();
    // The sync gate: the next wave starts once the canary is in sync, whatever its health.
    console.session.state.wave_gate = flotilla::config::wave_gate::WaveGate::Sync;
    let service = console.select("Service/shop/checkout");
    // Every placed cell of the Service waits to be applied.
    let placed: Vec<usize> = (0..console.state.fleet.clusters.len())
        .filter(|c| console.state.fleet.is_placed(service, *c))
        .collect();
    assert!(placed.len() > 2, "{placed:?}");
    let pending: Vec<CellUpdate> = placed
        .iter()
        .map(|c| CellUpdate {
            cell: CellRef {
                resource: service as u32,
                cluster: *c as u32,
            },
            status: CellStatus::Pending,
            message: None,
        })
        .collect();
    console.act(Action::Backend(BackendEvent::Cells(pending)));
    console.keys("a");
    let Mode::Confirm(pending) = &console.state.mode else {
        panic!("expected the confirmation, got {:?}", console.state.mode);
    };
    let all = pending.cells.clone();
    let canary_cluster = all.iter().map(|cell| cell.cluster).min().expect("cells");
    assert!(
        all.iter().any(|cell| cell.cluster != canary_cluster),
        "{all:?}"
    );
    console.keys("<tab>");
    let effects = console.keys("y");
    let [Effect::Apply { cells: canary }] = effects.as_slice() else {
        panic!("expected the canary's apply, got {effects:?}");
    };
    assert!(
        canary.iter().all(|cell| cell.cluster == canary_cluster),
        "{canary:?}"
    );
    let synced: Vec<CellUpdate> = canary
        .iter()
        .map(|cell| CellUpdate {
            cell: *cell,
            status: CellStatus::InSync,
            message: None,
        })
        .collect();
    let next = console.act(Action::Backend(BackendEvent::Cells(synced)));
    let [Effect::Apply { cells: rest }] = next.as_slice() else {
        panic!("expected the second wave once the canary is in sync, got {next:?}");
    };
    assert_eq!(rest.len() + canary.len(), all.len());
    assert!(rest.iter().all(|cell| cell.cluster != canary_cluster));
    // Esc drops nothing already sent; with the last wave in flight there is nothing left.
    let rollout = console
        .state
        .rollout
        .clone()
        .expect("still following wave 2");
    assert_eq!(rollout.current, 1);
}

/// The placement editor on the nightly report, widened to dev, in its review of the changes.
fn reviewing_a_widened_selector(console: &mut Console) {
    console.select("CronJob/batch/nightly-report");
    console.keys("e");
    console.keys("<tab>");
    console.keys("<ctrl-u>");
    console.type_text("env in (batch,dev)");
    console.keys("<enter>");
}

fn review_stage(scroll: usize, side_by_side: bool) -> Stage {
    Stage::Reviewing {
        scroll,
        side_by_side,
    }
}

#[test]
fn the_reviews_keys_work_as_shipped_through_the_console_key_mapping() {
    let mut console = Console::demo();
    reviewing_a_widened_selector(&mut console);
    assert_eq!(console.editor().stage, review_stage(0, false));
    console.keys("n");
    assert_eq!(console.editor().stage, review_stage(1, false));
    console.keys("s");
    assert_eq!(console.editor().stage, review_stage(1, true));
    console.keys("<esc>");
    assert_eq!(
        console.editor().stage,
        Stage::Editing,
        "esc goes back to editing"
    );
}

#[test]
fn remapped_review_keys_move_and_the_keys_they_replaced_do_nothing() {
    let keymap =
        user_keymap("editor:\n  next-change: [ctrl-n]\n  side-by-side: [v]\n  save: [ctrl-s]\n");
    let mut console = Console::demo();
    console.use_keymap(keymap);
    reviewing_a_widened_selector(&mut console);
    console.keys("ns");
    assert_eq!(
        console.editor().stage,
        review_stage(0, false),
        "n and s moved away"
    );
    console.keys("<ctrl-n>v");
    assert_eq!(console.editor().stage, review_stage(1, true));
    console.keys("y<enter>");
    assert!(
        matches!(console.state.mode, Mode::Placement(_)),
        "y and enter no longer save"
    );
    console.keys("<ctrl-s>");
    assert!(
        !matches!(console.state.mode, Mode::Placement(_)),
        "ctrl-s asks to save: {:?}",
        console.state.mode
    );
    assert!(console.state.edits.is_empty(), "asking writes nothing");
}

#[test]
fn remapped_placement_keys_work_on_the_cluster_list_and_out_of_text_fields_and_the_keys_they_replaced_do_nothing()
 {
    let keymap = user_keymap(
        "placement:\n  toggle: [x]\n  down: [ctrl-n]\n  next-field: [ctrl-f]\n  review: [ctrl-r]\n",
    );
    let mut console = Console::demo();
    console.use_keymap(keymap);
    console.select("CronJob/batch/nightly-report");
    console.keys("e");
    assert_eq!(console.editor().field, Field::Clusters);
    let first = console.state.clusters[0].spec.name.clone();
    let second = console.state.clusters[1].spec.name.clone();

    console.keys("j<space>");
    assert_eq!(console.editor().cursor, 0, "j moved away");
    assert!(
        console.editor().edit.clusters.is_empty(),
        "space moved away"
    );
    console.keys("x");
    assert!(console.editor().edit.clusters.contains(&first), "x toggles");
    console.keys("<ctrl-n>x");
    assert_eq!(console.editor().cursor, 1, "ctrl-n moves down");
    assert!(console.editor().edit.clusters.contains(&second));
    console.keys("x");
    assert!(
        !console.editor().edit.clusters.contains(&second),
        "and back"
    );
    console.keys("kx");
    assert!(
        console.editor().edit.clusters.is_empty(),
        "k still moves up"
    );

    console.keys("<tab>");
    assert_eq!(console.editor().field, Field::Clusters, "tab moved away");
    console.keys("<ctrl-f>");
    assert_eq!(
        console.editor().field,
        Field::Selector,
        "ctrl-f: next field"
    );
    // In a text field characters are text, even the ones the section binds.
    console.keys("<ctrl-u>env in (batch,dev)x<backspace>");
    assert_eq!(console.editor().edit.selector, "env in (batch,dev)");
    console.keys("<tab><enter>");
    assert_eq!(console.editor().field, Field::Selector);
    assert_eq!(console.editor().stage, Stage::Editing, "enter moved away");
    let asked = console.keys("<ctrl-r>");
    assert_eq!(
        console.editor().stage,
        review_stage(0, false),
        "ctrl-r reviews"
    );
    assert!(
        matches!(asked.as_slice(), [Effect::DryRun { .. }]),
        "{asked:?}"
    );
    assert!(console.state.edits.is_empty(), "reviewing writes nothing");
}

#[test]
fn in_a_text_field_the_list_commands_do_nothing_whatever_keys_a_user_map_gives_them() {
    let keymap = user_keymap("placement:\n  toggle: [ctrl-t]\n  up: [ctrl-p]\n  help: [ctrl-h]\n");
    let mut console = Console::demo();
    console.use_keymap(keymap);
    console.select("CronJob/batch/nightly-report");
    console.keys("e");
    console.keys("<tab><ctrl-u>env=dev");
    assert_eq!(console.editor().field, Field::Selector);
    console.keys("<ctrl-t><ctrl-p><ctrl-h>");
    assert_eq!(
        console.editor().field,
        Field::Selector,
        "nothing left the field"
    );
    assert_eq!(
        console.editor().edit.selector,
        "env=dev",
        "no space typed, nothing cleared"
    );
    assert!(console.editor().edit.clusters.is_empty(), "nothing toggled");
    assert!(!console.state.help_open, "no help over a text field");
    // On the cluster list the same keys are the section's commands.
    for _ in 0..5 {
        if console.editor().field != Field::Clusters {
            console.keys("<tab>");
        }
    }
    assert_eq!(console.editor().field, Field::Clusters);
    console.keys("<down><ctrl-p><ctrl-t>");
    let first = console.state.clusters[0].spec.name.clone();
    assert!(
        console.editor().edit.clusters.contains(&first),
        "ctrl-t toggles"
    );
    console.keys("<ctrl-h>");
    assert!(console.state.help_open, "ctrl-h opens the help");
}

#[test]
fn help_opens_from_the_cluster_list_and_the_review_but_is_text_in_a_field() {
    let mut console = Console::demo();
    console.select("CronJob/batch/nightly-report");
    console.keys("e");
    console.keys("j");
    console.help_and_back("j<space><tab><enter>");
    console.keys("<tab><ctrl-u>env in (batch,dev)?");
    assert!(!console.state.help_open, "in a text field ? is text");
    assert_eq!(console.editor().edit.selector, "env in (batch,dev)?");
    console.keys("<backspace><enter>n");
    assert_eq!(console.editor().stage, review_stage(1, false));
    console.help_and_back("s<enter>y");
    assert_eq!(console.editor().stage, review_stage(1, false));
    assert!(
        console.state.edits.is_empty(),
        "saving under help did nothing"
    );
}

#[test]
fn a_cluster_leaving_a_fleet_directorys_placement_keeps_its_objects_in_the_reviews_words() {
    let mut console = Console::demo();
    console.select("CronJob/batch/nightly-report");
    console.keys("e");
    console.keys("<tab>");
    console.keys("<ctrl-u>");
    console.type_text("env=nowhere");
    let preview = console.editor().preview.as_ref().expect("a preview");
    let leaving: Vec<String> = preview.leaving().map(|c| c.cluster.clone()).collect();
    assert_eq!(leaving, ["batch-ap-south-1"]);
    console.keys("<enter>");
    let words = flotilla::model::leaving(None);
    assert_eq!(
        words, "its objects stay on it until `flotilla apply --prune`",
        "`placement set` says the same (tests/cli_editors.rs)"
    );
    let rows = review_rows(console.editor());
    assert!(
        rows.contains(&ReviewRow::Note(format!(
            "batch-ap-south-1 leaves; {words}"
        ))),
        "{rows:?}"
    );
    // On a Karmada hub the same review says what Karmada does.
    let mut on_hub = console.editor().clone();
    on_hub.hub = Some(flotilla::model::HubKind::Karmada);
    assert!(
        review_rows(&on_hub).contains(&ReviewRow::Note(
            "batch-ap-south-1 leaves; Karmada deletes its objects there".into()
        )),
        "{:?}",
        review_rows(&on_hub)
    );
}

#[test]
fn the_review_of_a_shared_policys_edit_names_every_other_resource_it_changes() {
    let mut console = Console::demo();
    console.select("Deployment/shop/inventory");
    console.keys("e");
    let staging = console.cluster("staging-eu-west-1");
    for _ in 0..staging {
        console.keys("<down>");
    }
    // Naming staging ANDs the name with the label selector, which staging fails: every
    // resource of the shared policy leaves every cluster.
    console.keys(" ");
    console.keys("<enter>");
    let rows = review_rows(console.editor());
    let notes: Vec<&str> = rows
        .iter()
        .filter_map(|row| match row {
            ReviewRow::Note(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        notes.first().copied(),
        Some(
            "2 other resource(s) share PropagationPolicy shop/shop-default; the edit changes 2 of them \
             (o saves it as a policy of its own instead: they keep theirs)"
        ),
        "said up front: {notes:?}"
    );
    for other in ["Service/shop/checkout", "ConfigMap/shop/registry-config"] {
        assert!(
            notes
                .iter()
                .any(|note| note.starts_with(&format!("also {other}: leaves "))
                    && note.contains("prod-eu-west-1")),
            "{other}: {notes:?}"
        );
    }
    // The confirmation asked before writing says so too.
    assert!(console.keys("<enter>").is_empty(), "the review only asks");
    let Mode::Confirm(pending) = &console.state.mode else {
        panic!("expected the confirmation, got {:?}", console.state.mode);
    };
    assert!(
        pending.summary.iter().any(|line| line
            == "also changes 2 other resource(s) PropagationPolicy shop/shop-default places: \
                Service/shop/checkout, ConfigMap/shop/registry-config"),
        "{:?}",
        pending.summary
    );
}

#[test]
fn o_in_the_review_saves_a_shared_policys_edit_as_a_policy_of_the_resources_own() {
    let mut console = Console::demo();
    console.select("Deployment/shop/inventory");
    let inventory = console.state.resource_view.selected().expect("selected");
    console.keys("e");
    let staging = console.cluster("staging-eu-west-1");
    for _ in 0..staging {
        console.keys("<down>");
    }
    console.keys(" ");
    console.keys("<enter>");
    assert!(console.keys("o").is_empty(), "o only asks");
    let Mode::Confirm(pending) = &console.state.mode else {
        panic!("expected the confirmation, got {:?}", console.state.mode);
    };
    let save = pending.save.as_ref().expect("a document to save");
    // A new policy for inventory alone, beside the shared one; the shared one is not rewritten.
    assert_eq!(save.title, "PropagationPolicy shop/inventory");
    assert_eq!(
        save.object["spec"]["resourceSelectors"][0]["name"],
        "inventory"
    );
    assert_eq!(save.object["spec"]["preemption"], "Always");
    assert!(
        pending.summary.iter().any(|line| line
            == "PropagationPolicy shop/shop-default keeps placing its 2 other resource(s) as it does"),
        "{:?}",
        pending.summary
    );
    // Only inventory's objects are applied: the other resources' cells are not touched.
    assert!(
        pending
            .cells
            .iter()
            .all(|cell| cell.resource as usize == inventory),
        "{:?}",
        pending.cells
    );
}
