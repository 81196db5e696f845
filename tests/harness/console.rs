//! The console without a terminal, driven as an operator drives it (in the spirit of helix's
//! `test_key_sequence`): keys written as in key map files go through the console's own key
//! mapping (`console::keys`) and the default key map into the real `update`. The effects each
//! action produces come back to the test, and the fleet edits it confirmed wait in
//! `state.edits`; a console made `running_effects` also has the session run them (sending
//! effects to a channel the test reads, writing the edits), as the console loop does. It must not reimplement anything the session or the loop does.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use flotilla::app::action::Action;
use flotilla::app::session::{Session, Store};
use flotilla::app::state::{FleetEdit, FleetSave, State};
use flotilla::config::keymap::{Key, KeyCodeName, KeyCommand, Keymap};
use flotilla::engine::{Fleet, SourceFile, load_fleet};
use flotilla::messages::{CellRef, Effect};
use tokio::sync::mpsc;

/// A headless console: the session (state, fleet and files) and what it sent.
pub struct Console {
    pub session: Session,
    sent: mpsc::UnboundedReceiver<Effect>,
    keymap: Keymap,
    runs_effects: bool,
}

/// The console is its session with a keyboard: `console.state` (and its fleet) read through.
impl Deref for Console {
    type Target = Session;

    fn deref(&self) -> &Session {
        &self.session
    }
}

impl DerefMut for Console {
    fn deref_mut(&mut self) -> &mut Session {
        &mut self.session
    }
}

impl Console {
    /// The demo fleet, kept in memory, before the backend reported anything.
    pub fn demo() -> Console {
        let files = flotilla::fleet::demo::demo_files();
        let (fleet, errors) = load_fleet(&files);
        assert!(errors.is_empty(), "{errors:?}");
        let fleet = Arc::new(fleet);
        let state = flotilla::app::state_for_fleet(&fleet, "demo".into());
        Console::new(state, fleet, files)
    }

    /// A console on this state, fleet and files (kept in memory).
    pub fn new(mut state: State, fleet: Arc<Fleet>, files: Vec<SourceFile>) -> Console {
        let (effects, sent) = mpsc::unbounded_channel();
        state.fleet = fleet;
        Console {
            session: Session::new(state, files, Some(effects), Store::Memory),
            sent,
            keymap: Keymap::built_in("default"),
            runs_effects: false,
        }
    }

    /// A console on a state the test built, with no fleet files behind it (a hub's).
    pub fn on_state(state: State) -> Console {
        Console::new(state, Arc::new(Fleet::default()), Vec::new())
    }

    /// From now on keys go through this key map instead of the default one.
    pub fn use_keymap(&mut self, keymap: Keymap) {
        self.keymap = keymap;
    }

    /// The session also runs every action's effects, as the console loop does.
    pub fn running_effects(mut self) -> Console {
        self.runs_effects = true;
        self
    }

    /// One action through `update` (and, when running effects, the rest of what the session
    /// does with it); its effects.
    pub fn act(&mut self, action: Action) -> Vec<Effect> {
        let effects = self.session.step(action);
        if self.runs_effects {
            self.session.run_effects(effects.clone());
            self.session.write_edits();
        }
        effects
    }

    pub fn command(&mut self, command: KeyCommand) -> Vec<Effect> {
        self.act(Action::Command(command))
    }

    /// Types into the open input, each character as the terminal sends it (a `<` too);
    /// typing alone writes nothing.
    pub fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            let key = Key {
                code: KeyCodeName::Char(c),
                ctrl: false,
                alt: false,
            };
            let action = key_action(&self.session.state, key, &self.keymap);
            let effects = action.map(|action| self.act(action)).unwrap_or_default();
            assert!(effects.is_empty(), "typing writes nothing");
        }
    }

    /// Presses a sequence of keys, each a character or a key map name in angle brackets
    /// (`"i2.5.0<enter><enter>y"`, `"<tab><ctrl-u>env=dev"`), as the terminal would send
    /// them: outside an input they go through the default key map, inside one they are typed.
    /// Returns every effect they produced, in order.
    pub fn keys(&mut self, sequence: &str) -> Vec<Effect> {
        let mut effects = Vec::new();
        for key in parse_keys(sequence) {
            if let Some(action) = key_action(&self.session.state, key, &self.keymap) {
                effects.extend(self.act(action));
            }
        }
        effects
    }

    /// Opens the help with `?` over the view now open, presses `under_help` (which must change
    /// nothing) and closes the help with esc: the view is back as it was.
    pub fn help_and_back(&mut self, under_help: &str) {
        let before = self.session.state.mode.clone();
        self.keys("?");
        assert!(self.session.state.help_open, "? opens the help");
        let effects = self.keys(under_help);
        assert!(effects.is_empty(), "{under_help:?} under help: {effects:?}");
        assert_eq!(
            self.session.state.mode, before,
            "{under_help:?} under help left the view alone"
        );
        self.keys("<esc>");
        assert!(!self.session.state.help_open, "esc closes the help");
        assert_eq!(
            self.session.state.mode, before,
            "esc closes the help, not the view"
        );
        self.keys("??");
        assert!(!self.session.state.help_open, "? closes it too");
        assert_eq!(self.session.state.mode, before);
    }

    /// Confirms with `y` an edit that saves one fleet document: nothing reaches the backend
    /// before the save, and the one edit waiting is that document's: what it saves, the cells
    /// it then propagates, and the objects it then deletes.
    pub fn confirm_document(&mut self) -> (FleetSave, Vec<CellRef>, Vec<CellRef>) {
        let effects = self.keys("y");
        assert!(
            effects.is_empty(),
            "the backend hears of it after the save: {effects:?}"
        );
        let edits = self.session.state.edits.clone();
        let [
            FleetEdit::Document {
                save,
                cells,
                delete,
            },
        ] = edits.as_slice()
        else {
            panic!("expected one edited document to save, got {edits:?}");
        };
        (save.clone(), cells.clone(), delete.clone())
    }

    /// Effects the session sent to the backend so far.
    pub fn sent(&mut self) -> Vec<Effect> {
        let mut sent = Vec::new();
        while let Ok(effect) = self.sent.try_recv() {
            sent.push(effect);
        }
        sent
    }

    /// Focuses the resources pane and puts its cursor on the resource with this display key.
    pub fn select(&mut self, key: &str) -> usize {
        self.keys("<tab>");
        let row = self
            .state
            .resources
            .iter()
            .position(|r| r.target.display_key() == key)
            .unwrap_or_else(|| panic!("no resource {key}"));
        put_cursor_on(&mut self.session.state, row);
        row
    }

    /// Puts the clusters pane's cursor on this cluster (the matrix column).
    pub fn select_cluster(&mut self, name: &str) -> usize {
        let cluster = self.cluster(name);
        put_cluster_cursor_on(&mut self.session.state, cluster);
        cluster
    }

    /// A cluster's index in the fleet.
    pub fn cluster(&self, name: &str) -> usize {
        self.state
            .fleet
            .cluster_index(name)
            .expect("a demo cluster")
    }
}

/// `"ab<enter><ctrl-u>"` as keys: characters, and key map names in angle brackets.
fn parse_keys(sequence: &str) -> Vec<Key> {
    let mut keys = Vec::new();
    let mut rest = sequence;
    while let Some(c) = rest.chars().next() {
        if c == '<'
            && let Some(end) = rest.find('>')
        {
            let name = &rest[1..end];
            keys.push(Key::parse(name).unwrap_or_else(|err| panic!("{sequence:?}: {err}")));
            rest = &rest[end + 1..];
            continue;
        }
        keys.push(Key {
            code: KeyCodeName::Char(c),
            ctrl: false,
            alt: false,
        });
        rest = &rest[c.len_utf8()..];
    }
    keys
}

/// The terminal event a key map key stands for.
fn key_event(key: Key) -> KeyEvent {
    let code = match key.code {
        KeyCodeName::Char(c) => KeyCode::Char(c),
        KeyCodeName::Enter => KeyCode::Enter,
        KeyCodeName::Esc => KeyCode::Esc,
        KeyCodeName::Tab => KeyCode::Tab,
        KeyCodeName::BackTab => KeyCode::BackTab,
        KeyCodeName::Up => KeyCode::Up,
        KeyCodeName::Down => KeyCode::Down,
        KeyCodeName::Left => KeyCode::Left,
        KeyCodeName::Right => KeyCode::Right,
        KeyCodeName::PageUp => KeyCode::PageUp,
        KeyCodeName::PageDown => KeyCode::PageDown,
        KeyCodeName::Home => KeyCode::Home,
        KeyCodeName::End => KeyCode::End,
        KeyCodeName::Backspace => KeyCode::Backspace,
    };
    let mut modifiers = KeyModifiers::NONE;
    if key.ctrl {
        modifiers |= KeyModifiers::CONTROL;
    }
    if key.alt {
        modifiers |= KeyModifiers::ALT;
    }
    KeyEvent::new(code, modifiers)
}

/// A user key map file `keymaps/mine.yaml` with this text, loaded as the console loads it;
/// it must load without errors.
pub fn user_keymap(text: &str) -> Keymap {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join("keymaps")).expect("mkdir");
    std::fs::write(dir.path().join("keymaps/mine.yaml"), text).expect("write");
    let map = Keymap::load("mine", Some(dir.path()));
    assert!(map.errors.is_empty(), "{:?}", map.errors);
    map
}

/// The action a key makes in `state`'s current key context, as the console loop maps it.
fn key_action(state: &State, key: Key, keymap: &Keymap) -> Option<Action> {
    let event = Event::Key(key_event(key));
    flotilla::console::keys::action_in(event, state.key_context(), keymap)
}

/// Presses keys (as [`Console::keys`] reads them) on a bare state through the default key
/// map into the real `update`, for tests that only draw what follows; the effects are
/// returned, not run.
pub fn press(state: &mut State, sequence: &str) -> Vec<Effect> {
    let keymap = Keymap::built_in("default");
    let mut effects = Vec::new();
    for key in parse_keys(sequence) {
        if let Some(action) = key_action(state, key, &keymap) {
            effects.extend(flotilla::app::update(state, action));
        }
    }
    effects
}

/// Presses keys (as [`Console::keys`] reads them) on a session through the default key map,
/// each dispatched as the console loop dispatches it, for tests that drive a session of their
/// own (a hub's).
pub fn press_in(session: &mut Session, sequence: &str) {
    let keymap = Keymap::built_in("default");
    for key in parse_keys(sequence) {
        if let Some(action) = key_action(&session.state, key, &keymap) {
            session.dispatch(action);
        }
    }
}

/// Puts the resources pane's cursor on resource `row`, as moving to it would; panics when the
/// row is filtered out or folded away.
pub fn put_cursor_on(state: &mut State, row: usize) {
    state.resource_view.cursor = state
        .resource_view
        .visible
        .iter()
        .position(|r| *r == row)
        .unwrap_or_else(|| panic!("resource row {row} is visible"));
}

/// Puts the clusters pane's cursor (the matrix column) on cluster `column`, as moving to it
/// would; panics when the cluster is filtered out.
pub fn put_cluster_cursor_on(state: &mut State, column: usize) {
    state.cluster_view.cursor = state
        .cluster_view
        .visible
        .iter()
        .position(|c| *c == column)
        .unwrap_or_else(|| panic!("cluster column {column} is visible"));
}
