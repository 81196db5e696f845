//! The terminal's keys as the app's messages, each resolved once, here: a crossterm key event
//! becomes the key map's [`Key`], and the live key map names the command it triggers where
//! keys go now — a main-view [`KeyCommand`](crate::config::keymap::KeyCommand)
//! ([`Action::Command`]) or a command of the view section in focus ([`Action::View`]); where
//! the operator types, the key is an [`InputKey`] ([`Action::Input`]). ctrl-c always quits and
//! a resize is an [`Action`] like any other. This is the only place crossterm's key types are
//! read. It must not decide what a command does (that is `update`'s job), nor hand on a key
//! for the app to decode into a command again.

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::app::action::{Action, InputKey};
use crate::app::state::KeyContext;
use crate::config::keymap::{Key, KeyCodeName, Keymap, Section, ViewCommand};

/// The action a terminal event stands for, if any: `typing` says whether keys go to a text
/// input (see [`crate::app::state::State::is_typing`]) rather than to the key map.
pub fn action_for(event: Event, typing: bool, keymap: &Keymap) -> Option<Action> {
    let context = if typing {
        KeyContext::Typing
    } else {
        KeyContext::Commands
    };
    action_in(event, context, keymap)
}

/// The action a terminal event stands for where keys go now (see
/// [`crate::app::state::State::key_context`]). In a view's section the key is the command the
/// live map binds to it there; a key the section leaves free does nothing (in the object view
/// and on the wall it is the main map's, of which they obey quit only).
pub fn action_in(event: Event, context: KeyContext, keymap: &Keymap) -> Option<Action> {
    match event {
        Event::Key(key) if key.kind != KeyEventKind::Release => {
            let ctrl_c =
                key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
            if ctrl_c {
                return Some(Action::Terminate);
            }
            match context {
                KeyContext::Typing => input_key_of(key).map(Action::Input),
                KeyContext::Commands => key_of(key)
                    .and_then(|key| keymap.command_for(key))
                    .map(Action::Command),
                KeyContext::View(section) => {
                    let pressed = key_of(key)?;
                    match section_command(keymap, section, pressed) {
                        Some(command) => Some(Action::View(section, command)),
                        None if matches!(section, Section::Object | Section::Wall) => {
                            keymap.command_for(pressed).map(Action::Command)
                        }
                        None => None,
                    }
                }
                KeyContext::Form(section) => form_action(key, section, keymap),
            }
        }
        Event::Resize(width, height) => Some(Action::Resize { width, height }),
        _ => None,
    }
}

/// A key in a view's text field. A character without ctrl or alt, and backspace, are text
/// even where the section binds them (`k` is up on a list, a letter in a field). Any other key
/// is the command the section binds to it; one it leaves free is text if it edits text
/// (ctrl-u clears the field) and otherwise nothing — but shift-tab, which no section's field
/// binds by default, is the section's `up`, the field before, as in every input.
fn form_action(event: KeyEvent, section: Section, keymap: &Keymap) -> Option<Action> {
    let pressed = key_of(event)?;
    if !is_text(pressed) {
        if let Some(command) = section_command(keymap, section, pressed) {
            return Some(Action::View(section, command));
        }
        if pressed.code == KeyCodeName::BackTab {
            return Some(Action::View(section, ViewCommand::Up));
        }
    }
    input_key_of(event)
        .filter(|key| key.edits_text())
        .map(Action::Input)
}

/// The command a view's section binds to a key. A key that is not a character, pressed with
/// ctrl or alt the section does not name, is the plain key (ctrl-enter is enter, alt-↓ is ↓),
/// as a text input reads it.
fn section_command(keymap: &Keymap, section: Section, pressed: Key) -> Option<ViewCommand> {
    let plain = Key {
        ctrl: false,
        alt: false,
        ..pressed
    };
    keymap.view_command(section, pressed).or_else(|| {
        let modified = plain != pressed && !matches!(pressed.code, KeyCodeName::Char(_));
        modified
            .then(|| keymap.view_command(section, plain))
            .flatten()
    })
}

/// The input key a terminal key stands for while typing; `None` for keys inputs ignore.
pub fn input_key_of(event: KeyEvent) -> Option<InputKey> {
    let ctrl = event.modifiers.contains(KeyModifiers::CONTROL);
    Some(match event.code {
        KeyCode::Char('u') if ctrl => InputKey::ClearLine,
        KeyCode::Char(_) if ctrl => return None,
        KeyCode::Char(c) => InputKey::Char(c),
        KeyCode::Backspace => InputKey::Backspace,
        KeyCode::Enter => InputKey::Enter,
        KeyCode::Esc => InputKey::Esc,
        KeyCode::Tab => InputKey::Tab,
        KeyCode::Up | KeyCode::BackTab => InputKey::Up,
        KeyCode::Down => InputKey::Down,
        _ => return None,
    })
}

/// Whether a text field takes the key as text: a character without ctrl or alt, or backspace.
fn is_text(key: Key) -> bool {
    !key.ctrl && !key.alt && matches!(key.code, KeyCodeName::Char(_) | KeyCodeName::Backspace)
}

/// The key a terminal event stands for, if a map could name it. Shift is not part of a key:
/// it is already in the character (`?`, `G`).
pub fn key_of(event: KeyEvent) -> Option<Key> {
    let code = match event.code {
        KeyCode::Char(c) => KeyCodeName::Char(c),
        KeyCode::Enter => KeyCodeName::Enter,
        KeyCode::Esc => KeyCodeName::Esc,
        KeyCode::Tab => KeyCodeName::Tab,
        KeyCode::BackTab => KeyCodeName::BackTab,
        KeyCode::Up => KeyCodeName::Up,
        KeyCode::Down => KeyCodeName::Down,
        KeyCode::Left => KeyCodeName::Left,
        KeyCode::Right => KeyCodeName::Right,
        KeyCode::PageUp => KeyCodeName::PageUp,
        KeyCode::PageDown => KeyCodeName::PageDown,
        KeyCode::Home => KeyCodeName::Home,
        KeyCode::End => KeyCodeName::End,
        KeyCode::Backspace => KeyCodeName::Backspace,
        _ => return None,
    };
    Some(Key {
        code,
        ctrl: event.modifiers.contains(KeyModifiers::CONTROL),
        alt: event.modifiers.contains(KeyModifiers::ALT),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::keymap::KeyCommand;

    fn press(code: KeyCode, modifiers: KeyModifiers) -> Event {
        Event::Key(KeyEvent::new(code, modifiers))
    }

    #[test]
    fn terminal_keys_reach_the_default_map_as_it_names_them() {
        let map = Keymap::built_in("default");
        let command = |code, modifiers| action_for(press(code, modifiers), false, &map);
        assert_eq!(
            command(KeyCode::Char('q'), KeyModifiers::NONE),
            Some(Action::Command(KeyCommand::Quit))
        );
        // A shifted character is the character: `?` is bound as `?`.
        assert_eq!(
            command(KeyCode::Char('?'), KeyModifiers::SHIFT),
            Some(Action::Command(KeyCommand::Help))
        );
        assert_eq!(
            command(KeyCode::Char('j'), KeyModifiers::NONE),
            Some(Action::Command(KeyCommand::Down))
        );
        assert_eq!(
            key_of(KeyEvent::new(KeyCode::Char('x'), KeyModifiers::ALT)),
            Key::parse("alt-x").ok()
        );
        assert_eq!(
            key_of(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT)),
            Key::parse("shift-tab").ok()
        );
    }

    #[test]
    fn ctrl_c_quits_whatever_the_mode_and_typing_goes_to_the_input() {
        let map = Keymap::built_in("default");
        let ctrl_c = press(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(
            action_for(ctrl_c.clone(), false, &map),
            Some(Action::Terminate)
        );
        assert_eq!(action_for(ctrl_c, true, &map), Some(Action::Terminate));
        let q = press(KeyCode::Char('q'), KeyModifiers::NONE);
        assert_eq!(
            action_for(q, true, &map),
            Some(Action::Input(InputKey::Char('q'))),
            "while typing, q is a letter"
        );
        let ctrl_u = press(KeyCode::Char('u'), KeyModifiers::CONTROL);
        assert_eq!(
            action_for(ctrl_u, true, &map),
            Some(Action::Input(InputKey::ClearLine))
        );
        let released = Event::Key(KeyEvent::new_with_kind(
            KeyCode::Char('q'),
            KeyModifiers::NONE,
            KeyEventKind::Release,
        ));
        assert_eq!(action_for(released, false, &map), None);
        assert_eq!(
            action_for(Event::Resize(100, 30), false, &map),
            Some(Action::Resize {
                width: 100,
                height: 30
            })
        );
    }

    #[test]
    fn the_object_view_gets_its_sections_commands_and_the_main_maps_quit() {
        let map = Keymap::built_in("vim");
        let object = KeyContext::View(Section::Object);
        let press_in = |code, modifiers| action_in(press(code, modifiers), object, &map);
        let view = |command| Some(Action::View(Section::Object, command));
        let none = KeyModifiers::NONE;
        assert_eq!(
            press_in(KeyCode::BackTab, KeyModifiers::SHIFT),
            view(ViewCommand::PrevView),
            "shift-tab is the previous view, not up"
        );
        assert_eq!(
            press_in(KeyCode::Char('b'), KeyModifiers::CONTROL),
            view(ViewCommand::PageUp),
            "vim's ctrl-b pages up"
        );
        assert_eq!(
            press_in(KeyCode::Char('h'), none),
            view(ViewCommand::PrevCluster),
            "h is the previous cluster"
        );
        assert_eq!(
            press_in(KeyCode::Char('q'), none),
            Some(Action::Command(KeyCommand::Quit)),
            "a key the section leaves free is the main map's"
        );
        assert_eq!(
            press_in(KeyCode::Left, none),
            None,
            "vim binds no arrows, in the section or the main map"
        );
        assert_eq!(press_in(KeyCode::Char('w'), none), None, "a free key");
    }

    #[test]
    fn a_view_gets_the_command_its_section_binds_in_the_map_in_use() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let keymaps = dir.path().join("keymaps");
        std::fs::create_dir_all(&keymaps).expect("keymaps/");
        let text = "drift:\n  revert: [R]\n  back: [ctrl-g]\n";
        std::fs::write(keymaps.join("mine.yaml"), text).expect("mine.yaml");
        // The user's section laid over the default map's, as the console loads it.
        let map = Keymap::load("mine", Some(dir.path()));
        assert!(map.errors.is_empty(), "{:?}", map.errors);
        let drift = KeyContext::View(Section::Drift);
        let press_in = |code, modifiers| action_in(press(code, modifiers), drift, &map);
        assert_eq!(
            press_in(KeyCode::Char('R'), KeyModifiers::SHIFT),
            Some(Action::View(Section::Drift, ViewCommand::Revert))
        );
        assert_eq!(
            press_in(KeyCode::Char('g'), KeyModifiers::CONTROL),
            Some(Action::View(Section::Drift, ViewCommand::Back))
        );
        assert_eq!(
            press_in(KeyCode::Char('q'), KeyModifiers::NONE),
            None,
            "outside the object view the main map is not read"
        );
        assert_eq!(
            press_in(KeyCode::Down, KeyModifiers::CONTROL),
            Some(Action::View(Section::Drift, ViewCommand::Down)),
            "a modifier the section does not name leaves ↓ the plain key"
        );
        assert_eq!(
            press_in(KeyCode::Esc, KeyModifiers::ALT),
            None,
            "esc moved away, modified or not"
        );
        assert_eq!(
            press_in(KeyCode::Char('r'), KeyModifiers::ALT),
            None,
            "a character's modifiers always count"
        );
    }

    #[test]
    fn in_a_form_characters_are_text_and_the_other_keys_go_through_the_section() {
        let text = "placement:\n  next-field: [ctrl-f]\n  toggle: [ctrl-t]\n";
        let map = Keymap::parse("mine", text, "mine.yaml");
        assert!(map.errors.is_empty(), "{:?}", map.errors);
        let form = KeyContext::Form(Section::Placement);
        let press_in = |code, modifiers, context| action_in(press(code, modifiers), context, &map);
        let placement = |command| Some(Action::View(Section::Placement, command));
        let none = KeyModifiers::NONE;
        assert_eq!(
            press_in(KeyCode::Char('k'), none, form),
            Some(Action::Input(InputKey::Char('k'))),
            "k is up on the list, a letter in the field"
        );
        assert_eq!(
            press_in(KeyCode::Char(' '), none, form),
            Some(Action::Input(InputKey::Char(' ')))
        );
        assert_eq!(
            press_in(KeyCode::Backspace, none, form),
            Some(Action::Input(InputKey::Backspace))
        );
        assert_eq!(
            press_in(KeyCode::Char('f'), KeyModifiers::CONTROL, form),
            placement(ViewCommand::NextField),
            "ctrl-f leaves the field"
        );
        assert_eq!(press_in(KeyCode::Tab, none, form), None, "tab moved away");
        assert_eq!(
            press_in(KeyCode::Char('t'), KeyModifiers::CONTROL, form),
            placement(ViewCommand::Toggle),
            "the section's command (a text field ignores it), never a typed space"
        );
        assert_eq!(
            press_in(
                KeyCode::Char('t'),
                KeyModifiers::CONTROL,
                KeyContext::View(Section::Placement)
            ),
            placement(ViewCommand::Toggle),
            "on the list ctrl-t toggles"
        );
        assert_eq!(
            press_in(KeyCode::Char('u'), KeyModifiers::CONTROL, form),
            Some(Action::Input(InputKey::ClearLine))
        );
        assert_eq!(
            press_in(KeyCode::BackTab, KeyModifiers::SHIFT, form),
            placement(ViewCommand::Up),
            "shift-tab, left free, is the field before"
        );
        assert_eq!(
            press_in(KeyCode::Char('x'), KeyModifiers::ALT, form),
            Some(Action::Input(InputKey::Char('x'))),
            "a free alt key types its character, as in any input"
        );
        assert_eq!(
            press_in(KeyCode::Left, none, form),
            None,
            "a free key that edits no text does nothing"
        );
    }
}
