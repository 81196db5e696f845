//! The override editor driven headless on the demo fleet, as the console loop drives it (the
//! shared `harness::console` harness: keys through `update`, then the session's engine work).
//! It lists the rules that vary the selected cell's resource, previews exactly the clusters whose objects change,
//! shows a bad path or a mistyped value inline and refuses to go on, and only a confirmed
//! review produces the one effect that saves the edited document and propagates.

mod harness;

use flotilla::app::action::Action;
use flotilla::app::state::FleetEdit;
use flotilla::app::state::Mode;
use flotilla::app::state::override_editor::{FormField, OverrideEditor, Stage};
use flotilla::messages::{CellRef, Effect};
use harness::console::{Console, user_keymap};
use serde_json::json;

/// What these tests ask of the console beyond the shared harness.
trait OverrideEditing {
    /// Selects the cell of the resource with this display key on this cluster, and opens the
    /// override editor on it.
    fn open(&mut self, key: &str, cluster: &str) -> (usize, usize);
    fn editor(&self) -> &OverrideEditor;
    fn form_error(&self) -> Option<String>;
    fn changed_clusters(&self) -> Vec<String>;
}

impl OverrideEditing for Console {
    fn open(&mut self, key: &str, cluster: &str) -> (usize, usize) {
        let c = self.select_cluster(cluster);
        let row = self.select(key);
        assert_eq!(self.state.selected_cell(), Some((row, c)));
        self.keys("o");
        assert!(
            matches!(self.state.mode, Mode::Overrides(_)),
            "the editor opened: {:?} / {:?}",
            self.state.mode,
            self.state.notice
        );
        (row, c)
    }

    fn editor(&self) -> &OverrideEditor {
        match &self.state.mode {
            Mode::Overrides(editor) => editor,
            other => panic!("not in the override editor: {other:?}"),
        }
    }

    fn form_error(&self) -> Option<String> {
        match &self.editor().stage {
            Stage::Form(form) => form.error.clone(),
            other => panic!("no form open: {other:?}"),
        }
    }

    fn changed_clusters(&self) -> Vec<String> {
        self.editor()
            .preview
            .as_ref()
            .map(|p| p.clusters.clone())
            .unwrap_or_default()
    }
}

/// The replicas form shows the object's replicas selected: typing 5 over 3 gives 5, not 35;
/// backspace clears the prefilled value, and moving between fields keeps it.
#[test]
fn typing_over_the_prefilled_replicas_replaces_them() {
    let mut console = Console::demo();
    console.open("Deployment/shop/checkout", "prod-eu-west-1");
    console.keys("r");
    let Stage::Form(form) = &console.editor().stage else {
        panic!("the replicas form opens");
    };
    let current = form.value.clone();
    assert!(form.prefilled && !current.is_empty(), "{form:?}");
    console.keys("<up><down>");
    console.type_text("5");
    let Stage::Form(form) = &console.editor().stage else {
        panic!("the form stays open");
    };
    assert_eq!(form.value, "5", "typed over the prefilled {current}");
    console.type_text("0");
    let Stage::Form(form) = &console.editor().stage else {
        panic!("the form stays open");
    };
    assert_eq!(form.value, "50", "only the first key replaces");

    console.keys("<esc>r<backspace>");
    let Stage::Form(form) = &console.editor().stage else {
        panic!("the replicas form opens again");
    };
    assert_eq!(form.value, "", "backspace clears the prefilled value");
}

#[test]
fn an_image_tag_override_for_one_cluster_previews_that_cluster_and_saves_the_rule() {
    let mut console = Console::demo();
    let (checkout, eu1) = console.open("Deployment/shop/checkout", "prod-eu-west-1");
    let editor = console.editor();
    let titles: Vec<&str> = editor.docs.iter().map(|d| d.title.as_str()).collect();
    assert_eq!(
        titles,
        [
            "OverridePolicy shop/regional-registry",
            "OverridePolicy shop/z-flotilla-adopt-deployment-checkout"
        ],
        "every policy selecting the resource, then flotilla's own (to be created, named to apply last)"
    );
    assert!(editor.docs[1].created);
    assert_eq!(editor.rows.len(), 3, "regional-registry's three rules");
    assert!(editor.preview.is_none());

    console.keys("i");
    let Stage::Form(form) = &console.editor().stage else {
        panic!("the image form opens");
    };
    assert_eq!(form.target, "prod-eu-west-1", "the selected cell's cluster");
    assert_eq!(form.field, FormField::Value);
    console.type_text("2.5.0");
    assert!(console.keys("<enter>").is_empty());
    let editor = console.editor();
    assert_eq!(editor.stage, Stage::List);
    assert_eq!(editor.dirty, Some(1));
    assert_eq!(editor.error, None);
    assert_eq!(console.changed_clusters(), ["prod-eu-west-1"]);
    let preview = editor.preview.as_ref().expect("a preview");
    assert_eq!(preview.updated, 1);
    assert_eq!(preview.diffs.len(), 1);
    let diff = &preview.diffs[0].diff;
    assert!(
        diff.contains("-        image: eu.registry.example.com/shop/checkout:2.4.1")
            && diff.contains("+        image: eu.registry.example.com/shop/checkout:2.5.0"),
        "{diff}"
    );

    // Reviewing asks the cluster for a server-side dry run of the changed object.
    let asked = console.keys("<enter>");
    let [
        Effect::DryRun {
            cells, revision, ..
        },
    ] = asked.as_slice()
    else {
        panic!("expected a dry-run request, got {asked:?}");
    };
    assert_eq!(cells.len(), 1, "{cells:?}");
    let revision = *revision;
    assert_eq!(
        console.editor().stage,
        Stage::Reviewing {
            scroll: 0,
            side_by_side: false
        }
    );
    console.keys("s");
    assert_eq!(
        console.editor().stage,
        Stage::Reviewing {
            scroll: 0,
            side_by_side: true
        }
    );
    let answer = flotilla::messages::PlanItem {
        cluster: "prod-eu-west-1".into(),
        resource: preview_resource(&console),
        action: flotilla::messages::PlanAction::Update,
        diff: "-image: old\n+image: new\n".into(),
        message: String::new(),
        health: None,
    };
    console.act(Action::Backend(flotilla::messages::BackendEvent::DryRun {
        revision,
        items: vec![answer],
    }));
    let rows = flotilla::app::state::override_editor::review_rows(console.editor());
    assert!(
        rows.iter().any(
            |row| matches!(row, flotilla::app::state::review::ReviewRow::Note(n)
            if n == "server-side dry run: 1 of 1 cluster(s) answered")
        ),
        "{rows:?}"
    );
    assert!(console.keys("<enter>").is_empty(), "the review only asks");
    let Mode::Confirm(pending) = &console.state.mode else {
        panic!("expected the confirmation, got {:?}", console.state.mode);
    };
    assert!(
        pending.summary[0]
            .starts_with("create OverridePolicy shop/z-flotilla-adopt-deployment-checkout"),
        "{:?}",
        pending.summary
    );
    let (save, cells, delete) = console.confirm_document();
    assert!(delete.is_empty());
    assert!(save.file.ends_with("karmada-shop.yaml"), "{}", save.file);
    assert_eq!(
        save.object.pointer("/spec/overrideRules"),
        Some(&json!([{
            "targetCluster": {"clusterNames": ["prod-eu-west-1"]},
            "overriders": {"imageOverrider": [
                {"component": "Tag", "operator": "replace", "value": "2.5.0"}
            ]},
        }]))
    );
    assert_eq!(
        save.object
            .pointer("/metadata/labels/app.kubernetes.io~1managed-by"),
        Some(&json!("flotilla"))
    );
    assert_eq!(
        cells.as_slice(),
        [CellRef {
            resource: checkout as u32,
            cluster: eu1 as u32
        }]
    );
    let undo = console
        .state
        .last_change
        .as_ref()
        .expect("the change can be undone");
    assert_eq!(
        undo.previous.object.pointer("/spec/overrideRules"),
        Some(&json!([])),
        "undo leaves the created policy without rules"
    );
}

#[test]
fn a_bad_path_or_a_mistyped_value_is_shown_inline_and_nothing_proceeds() {
    let mut console = Console::demo();
    console.open("Deployment/shop/checkout", "prod-eu-west-1");
    console.keys("a");
    console.type_text("/spec/replica");
    console.keys("<down>");
    console.type_text("3");
    let error = console.form_error().expect("an inline error");
    assert!(error.contains("does not exist"), "{error}");
    assert!(console.keys("<enter>").is_empty());
    assert!(
        matches!(console.editor().stage, Stage::Form(_)),
        "still in the form"
    );
    assert_eq!(console.editor().dirty, None, "nothing applied");

    // Fix the path: a string where a number lives is refused too.
    console.keys("<up>");
    console.type_text("s");
    console.keys("<down>");
    console.keys("<ctrl-u>");
    console.type_text("\"three\"");
    let error = console.form_error().expect("a type error");
    assert!(
        error.contains("a number") && error.contains("a string"),
        "{error}"
    );
    console.keys("<enter>");
    assert_eq!(console.editor().dirty, None);
    // Unparsable YAML is named as such.
    console.keys("<ctrl-u>");
    console.type_text("[1, ");
    let error = console.form_error().expect("a parse error");
    assert!(error.contains("not YAML/JSON"), "{error}");

    console.keys("<esc>");
    assert_eq!(console.editor().stage, Stage::List);
    assert!(console.keys("<enter>").is_empty());
    assert_eq!(console.editor().stage, Stage::List, "nothing to review");
    assert!(console.keys("<esc>").is_empty());
    assert_eq!(console.state.mode, Mode::Normal);
}

#[test]
fn tab_cycles_path_completions_from_the_rendered_object() {
    let mut console = Console::demo();
    console.open("Deployment/shop/checkout", "prod-eu-west-1");
    console.keys("a");
    console.type_text("/spec/re");
    console.keys("<tab>");
    let path = |console: &Console| match &console.editor().stage {
        Stage::Form(form) => (form.path.clone(), form.completions.clone()),
        _ => panic!("no form"),
    };
    let (first, completions) = path(&console);
    assert_eq!(completions, ["/spec/replicas"]);
    assert_eq!(first, "/spec/replicas");
    console.type_text("/");
    console.keys("<ctrl-u>");
    console.type_text("/spec/template/spec/containers/0/");
    console.keys("<tab>");
    let (first, completions) = path(&console);
    assert!(completions.len() > 2, "{completions:?}");
    assert_eq!(first, completions[0]);
    console.keys("<tab>");
    assert_eq!(path(&console).0, completions[1], "tab cycles");
}

#[test]
fn reordering_and_deleting_rules_change_the_preview() {
    let mut console = Console::demo();
    console.open("Deployment/shop/checkout", "prod-eu-west-1");
    // Two replica rules for the same cluster in flotilla's policy: the later one wins.
    for (value, expected) in [("5", "5"), ("7", "7")] {
        console.keys("r");
        console.keys("<ctrl-u>");
        console.type_text(value);
        console.keys("<enter>");
        assert_eq!(console.editor().stage, Stage::List);
        let diff = &console.editor().preview.as_ref().expect("a preview").diffs[0].diff;
        assert!(diff.contains(&format!("+  replicas: {expected}")), "{diff}");
    }
    assert_eq!(console.changed_clusters(), ["prod-eu-west-1"]);
    assert_eq!(console.editor().cursor, 4, "the cursor is on the new rule");
    // Move the last rule (7) up: 5 now applies last.
    console.keys("K");
    assert_eq!(console.editor().cursor, 3);
    let diff = &console.editor().preview.as_ref().expect("a preview").diffs[0].diff;
    assert!(diff.contains("+  replicas: 5"), "{diff}");
    // Delete the rule now last (5): 7 remains.
    console.keys("<down>");
    console.keys("d");
    let diff = &console.editor().preview.as_ref().expect("a preview").diffs[0].diff;
    assert!(diff.contains("+  replicas: 7"), "{diff}");
    // Delete the other one (the cursor stays on flotilla's last rule): nothing changes any more.
    assert_eq!(console.editor().cursor, 3);
    console.keys("d");
    assert_eq!(console.editor().dirty, None);
    assert!(console.editor().preview.is_none());
    // Deleting a rule of the regional policy (it selects every Deployment) takes eu-west's
    // registry back on both eu prod clusters, and on the eu-west edge store inventory runs on.
    for _ in 0..3 {
        console.keys("<up>");
    }
    assert_eq!(console.editor().cursor, 0);
    console.keys("d");
    assert_eq!(console.editor().dirty, Some(0));
    assert_eq!(
        console.changed_clusters(),
        ["edge-store-0001", "prod-eu-west-1", "prod-eu-west-2"]
    );
    let preview = console.editor().preview.as_ref().expect("a preview");
    let checkout_group = preview
        .diffs
        .iter()
        .find(|g| g.resource.name == "checkout")
        .expect("checkout changes");
    assert_eq!(
        *checkout_group.clusters,
        ["prod-eu-west-1", "prod-eu-west-2"]
    );
    // One policy per save: adding a rule to flotilla's policy now is refused.
    console.keys("r");
    console.keys("<enter>");
    let error = console.form_error().expect("refused");
    assert!(error.contains("one policy per save"), "{error}");
}

#[test]
fn a_kubefed_resource_edits_its_spec_overrides() {
    let mut console = Console::demo();
    console.open("Deployment/payments/ledger", "prod-eu-west-2");
    let editor = console.editor();
    assert_eq!(editor.docs.len(), 1);
    assert_eq!(editor.docs[0].title, "FederatedDeployment payments/ledger");
    assert_eq!(editor.rows.len(), 3, "three operations over two clusters");
    // Selectors are not a KubeFed thing: the form says so.
    console.keys("i");
    console.keys("<up>");
    console.keys("<up>");
    console.keys("<ctrl-u>");
    console.type_text("env=prod");
    console.keys("<down>");
    console.keys("<down>");
    console.type_text("7.3.0");
    console.keys("<enter>");
    let error = console.form_error().expect("refused");
    assert!(error.contains("KubeFed"), "{error}");
    console.keys("<up>");
    console.keys("<up>");
    console.keys("<ctrl-u>");
    console.type_text("prod-eu-west-2");
    console.keys("<enter>");
    assert_eq!(console.editor().stage, Stage::List);
    assert_eq!(console.changed_clusters(), ["prod-eu-west-2"]);
    console.keys("<enter>");
    console.keys("<enter>");
    console.keys("y");
    let edits = console.state.edits.clone();
    let [FleetEdit::Document { save, .. }] = edits.as_slice() else {
        panic!("expected one edited document to save, got {edits:?}");
    };
    assert_eq!(save.title, "FederatedDeployment payments/ledger");
    let overrides = save.object.pointer("/spec/overrides").expect("overrides");
    assert_eq!(
        overrides[2],
        json!({"clusterName": "prod-eu-west-2", "clusterOverrides": [{
            "op": "replace",
            "path": "/spec/template/spec/containers/0/image",
            "value": "registry.example.com/payments/ledger:7.3.0",
        }]})
    );
    assert_eq!(overrides[0]["clusterName"], "prod-eu-west-1", "others kept");
}

#[test]
fn read_only_refuses_to_open() {
    let mut console = Console::demo();
    console.state.readonly = true;
    console.keys("<tab>");
    console.keys("o");
    assert_eq!(console.state.mode, Mode::Normal);
}

#[test]
fn the_session_saves_the_new_policy_and_renders_it_then_undo_takes_it_back() {
    let mut console = Console::demo().running_effects();
    console.select_cluster("prod-eu-west-1");
    console.select("Deployment/shop/checkout");
    console.keys("o");
    console.keys("i2.5.0<enter><enter><enter>y");
    let notice = console.state.notice.clone().unwrap_or_default();
    assert!(
        notice.contains("saved OverridePolicy shop/z-flotilla-adopt-deployment-checkout"),
        "{notice}"
    );
    let shop = console
        .state
        .files
        .iter()
        .find(|f| f.path.ends_with("karmada-shop.yaml"))
        .expect("the shop file");
    assert!(
        shop.text
            .ends_with("    overriders:\n      imageOverrider:\n      - component: Tag\n        operator: replace\n        value: \"2.5.0\"\n"),
        "appended at the end:\n{}",
        shop.text
    );
    let image = |session: &flotilla::app::session::Session, cluster: &str| {
        let c = session
            .state
            .fleet
            .cluster_index(cluster)
            .expect("a cluster");
        let r = session
            .state
            .fleet
            .resources
            .iter()
            .position(|r| r.target.name == "checkout" && r.target.kind == "Deployment")
            .expect("checkout");
        match session.state.fleet.decide(r, c) {
            flotilla::engine::Decision::Placed { object, .. } => object
                .pointer("/spec/template/spec/containers/0/image")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_string(),
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(
        image(&console.session, "prod-eu-west-1"),
        "eu.registry.example.com/shop/checkout:2.5.0"
    );
    assert_eq!(
        image(&console.session, "prod-eu-west-2"),
        "eu.registry.example.com/shop/checkout:2.4.1"
    );
    let sent = console.sent();
    assert!(
        matches!(
            sent.as_slice(),
            [Effect::DryRun { .. }, Effect::UseFleet(_), Effect::Apply { cells }] if cells.len() == 1
        ),
        "{sent:?}"
    );

    // Undo: the policy stays, with no rules; the image is back.
    console.keys("u");
    console.keys("y");
    assert_eq!(
        image(&console.session, "prod-eu-west-1"),
        "eu.registry.example.com/shop/checkout:2.4.1"
    );
}

/// The resource the override editor is on.
fn preview_resource(console: &Console) -> flotilla::model::ResourceRef {
    console.state.resources[console.editor().resource]
        .target
        .clone()
}

#[test]
fn remapped_list_keys_open_forms_and_delete_rules_and_the_keys_they_replaced_do_nothing() {
    let keymap = user_keymap("overrides:\n  replicas: [R]\n  delete: [x]\n  back: [ctrl-g]\n");
    let mut console = Console::demo();
    console.use_keymap(keymap);
    console.open("Deployment/shop/checkout", "prod-eu-west-1");
    let rules = console.editor().rows.len();

    console.keys("r");
    assert_eq!(console.editor().stage, Stage::List, "r moved away");
    console.keys("R<ctrl-u>5<enter>");
    assert_eq!(console.editor().stage, Stage::List, "R opened the form");
    assert_eq!(console.editor().rows.len(), rules + 1);
    assert_eq!(console.changed_clusters(), ["prod-eu-west-1"]);

    console.keys("d");
    assert_eq!(console.editor().rows.len(), rules + 1, "d moved away");
    console.keys("x");
    assert_eq!(console.editor().rows.len(), rules, "x deletes the new rule");
    assert_eq!(console.editor().dirty, None);

    console.keys("<esc>");
    assert!(
        matches!(console.state.mode, Mode::Overrides(_)),
        "esc moved away"
    );
    console.keys("<ctrl-g>");
    assert_eq!(console.state.mode, Mode::Normal);
    assert!(console.state.edits.is_empty(), "nothing was written");
}

#[test]
fn help_opens_from_the_list_of_rules_but_is_text_in_a_form() {
    let mut console = Console::demo();
    console.open("Deployment/shop/checkout", "prod-eu-west-1");
    console.keys("r<ctrl-u>5<enter>");
    assert_eq!(console.changed_clusters(), ["prod-eu-west-1"]);
    console.help_and_back("dKa<enter>");
    assert_eq!(console.changed_clusters(), ["prod-eu-west-1"]);
    console.keys("n");
    console.keys("note=why?");
    assert!(!console.state.help_open);
    let Stage::Form(form) = &console.editor().stage else {
        panic!("the annotation form: {:?}", console.editor().stage);
    };
    assert_eq!(form.value, "note=why?");
}
