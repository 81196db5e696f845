//! The override editor's own data, as `Mode::Overrides` holds it: the documents holding the
//! selected resource's override rules and each as edited, the rule rows, the form being
//! written, the engine's preview and the clusters' dry run. Plain data: it must not import the
//! state or act on it (keys and engine work are `app::override_editor`).

use serde_json::Value;

use super::review::{ReviewRow, diff_review_rows};
use crate::engine::edit::override_rules::{OverrideDoc, OverridePreview, RuleView};
use crate::engine::overrides::overriders::ImageComponent;
use crate::engine::overrides::patch::OpKind;
use crate::messages::PlanItem;

/// What a form writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FormKind {
    /// A JSON patch (also what the replicas and env shortcuts prefill).
    #[default]
    Patch,
    Image,
    Label,
    Annotation,
}

/// The form's input with the cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FormField {
    Target,
    /// The patch operation, or the image component (space cycles it).
    Op,
    Path,
    #[default]
    Value,
}

/// One rule being written: new (`editing: None`) or replacing rule `(doc, index)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Form {
    pub kind: FormKind,
    pub editing: Option<(usize, usize)>,
    pub target: String,
    pub op: OpKind,
    pub component: ImageComponent,
    pub path: String,
    pub value: String,
    /// The value was filled in from the object (the replicas it has now) and is shown
    /// selected: the first character typed replaces it and backspace clears it, so typing 5
    /// over 3 gives 5. Any other key keeps it as it is.
    pub prefilled: bool,
    pub field: FormField,
    /// What is wrong with the form, shown inline; nothing is applied meanwhile.
    pub error: Option<String>,
    /// Path completions tab cycles through, and the one shown.
    pub completions: Vec<String>,
    pub completion: usize,
}

impl Form {
    pub fn new(kind: FormKind, target: String) -> Form {
        Form {
            kind,
            editing: None,
            target,
            op: OpKind::Replace,
            component: ImageComponent::Tag,
            path: String::new(),
            value: String::new(),
            prefilled: false,
            field: FormField::Value,
            error: None,
            completions: Vec::new(),
            completion: 0,
        }
    }

    /// The inputs the form shows, in order.
    pub fn fields(&self) -> &'static [FormField] {
        match self.kind {
            FormKind::Patch => &[
                FormField::Target,
                FormField::Op,
                FormField::Path,
                FormField::Value,
            ],
            FormKind::Image => &[FormField::Target, FormField::Op, FormField::Value],
            FormKind::Label | FormKind::Annotation => &[FormField::Target, FormField::Value],
        }
    }
}

/// Listing rules, writing one, or reviewing the diffs before confirming.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Stage {
    #[default]
    List,
    Form(Box<Form>),
    Reviewing {
        scroll: usize,
        /// Old and new side by side instead of one unified column.
        side_by_side: bool,
    },
}

/// The editor's state; lives in `Mode::Overrides`.
#[derive(Debug, Clone, Default)]
pub struct OverrideEditor {
    pub resource: usize,
    /// The cell whose rendered object paths and values are checked against.
    pub cluster: usize,
    /// Filled in by `app::override_editor::refresh`: the documents holding rules, and each one as edited.
    pub docs: Vec<OverrideDoc>,
    pub objects: Vec<Value>,
    /// The selected cell's rendered object before any edit.
    pub rendered: Value,
    pub loaded: bool,
    /// Every rule row: (document, rule), recomputed by `refresh`.
    pub rows: Vec<(usize, RuleView)>,
    pub cursor: usize,
    /// The one document this edit changes (one document per save).
    pub dirty: Option<usize>,
    /// Why the edit cannot be saved (from the preview), shown inline.
    pub error: Option<String>,
    pub preview: Option<OverridePreview>,
    /// The clusters' server-side dry run of the edit under review, as answers arrive.
    pub dry_run: Vec<PlanItem>,
    /// How many clusters were asked.
    pub dry_run_clusters: usize,
    pub revision: u64,
    pub previewed: u64,
    pub stage: Stage,
}

impl PartialEq for OverrideEditor {
    fn eq(&self, other: &Self) -> bool {
        self.resource == other.resource
            && self.cluster == other.cluster
            && self.revision == other.revision
            && self.previewed == other.previewed
            && self.cursor == other.cursor
            && self.dirty == other.dirty
            && self.error == other.error
            && self.stage == other.stage
            && self.loaded == other.loaded
    }
}

impl Eq for OverrideEditor {}

impl OverrideEditor {
    pub fn new(resource: usize, cluster: usize) -> OverrideEditor {
        OverrideEditor {
            resource,
            cluster,
            revision: 1,
            ..OverrideEditor::default()
        }
    }

    /// Whether the preview shown belongs to the current rules.
    pub fn preview_is_current(&self) -> bool {
        self.previewed == self.revision && (self.preview.is_some() || self.dirty.is_none())
    }

    /// The document new rules go to.
    pub fn owned(&self) -> Option<usize> {
        self.docs.iter().position(|d| d.owned)
    }
}

/// The review's rows: the offline diff, replaced by the clusters' dry run as it answers.
pub fn review_rows(editor: &OverrideEditor) -> Vec<ReviewRow> {
    editor
        .preview
        .as_ref()
        .map(|p| diff_review_rows(&p.diffs, &editor.dry_run, editor.dry_run_clusters))
        .unwrap_or_default()
}

/// A dry-run answer, kept when it belongs to the edit under review.
pub fn dry_run_answered(editor: &mut OverrideEditor, revision: u64, items: Vec<PlanItem>) {
    if editor.revision == revision && matches!(editor.stage, Stage::Reviewing { .. }) {
        editor.dry_run.extend(items);
    }
}
