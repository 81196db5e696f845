//! The terminal's keys as the app's messages: a crossterm key event becomes the key map's
//! [`Key`] (and so a [`KeyCommand`](crate::config::keymap::KeyCommand)), or, while the operator
//! is typing, an [`InputKey`]; ctrl-c always quits and a resize is an [`Action`] like any other.
//! This is the only place crossterm's key types are read. It must not decide what a key does:
//! that is the key map's and `update`'s job.

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::app::action::{Action, InputKey};
use crate::app::update::KeyContext;
use crate::config::keymap::{Key, KeyCodeName, Keymap, Section};

/// The action a terminal event stands for, if any: `typing` says whether keys go to a text
/// input (see [`crate::app::update::is_typing`]) rather than to the key map.
pub fn action_for(event: Event, typing: bool, keymap: &Keymap) -> Option<Action> {
    let context = if typing {
        KeyContext::Typing
    } else {
        KeyContext::Commands
    };
    action_in(event, context, keymap)
}

/// The action a terminal event stands for where keys go now (see
/// [`crate::app::update::key_context`]). In a view's section the key map's key is handed on as
/// the key the view's code reads for that command, and a key this map moved away is dropped.
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
                    // The object view reads the main view's keys beneath its own section: a
                    // key the section leaves free does what the main map says (the view
                    // obeys quit only).
                    if section == Section::Object && keymap.view_command(section, pressed).is_none()
                    {
                        return keymap.command_for(pressed).map(Action::Command);
                    }
                    let understood = keymap.translate(section, pressed)?;
                    view_input_key(understood).map(Action::Input)
                }
                KeyContext::Form(section) => {
                    let pressed = key_of(key)?;
                    if is_text(pressed) {
                        return input_key_of(key).map(Action::Input);
                    }
                    let understood = keymap.translate(section, pressed)?;
                    if understood == pressed {
                        input_key_of(key).map(Action::Input)
                    } else if is_text(understood) {
                        // A command whose key is a character means nothing in a text field.
                        None
                    } else {
                        input_key_of_key(understood).map(Action::Input)
                    }
                }
            }
        }
        Event::Resize(width, height) => Some(Action::Resize { width, height }),
        _ => None,
    }
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

/// The key a view with a section of its own reads for a key map key: every key as it is,
/// ctrl-u as the clear-line key text inputs also know, no other ctrl or alt character.
fn view_input_key(key: Key) -> Option<InputKey> {
    Some(match key.code {
        KeyCodeName::Char('u') if key.ctrl && !key.alt => InputKey::ClearLine,
        KeyCodeName::Char(_) if key.ctrl || key.alt => return None,
        KeyCodeName::Char(c) => InputKey::Char(c),
        KeyCodeName::Enter => InputKey::Enter,
        KeyCodeName::Esc => InputKey::Esc,
        KeyCodeName::Tab => InputKey::Tab,
        KeyCodeName::BackTab => InputKey::BackTab,
        KeyCodeName::Up => InputKey::Up,
        KeyCodeName::Down => InputKey::Down,
        KeyCodeName::Left => InputKey::Left,
        KeyCodeName::Right => InputKey::Right,
        KeyCodeName::PageUp => InputKey::PageUp,
        KeyCodeName::PageDown => InputKey::PageDown,
        KeyCodeName::Home => InputKey::Home,
        KeyCodeName::End => InputKey::End,
        KeyCodeName::Backspace => InputKey::Backspace,
    })
}

/// Whether a text field takes the key as text: a character without ctrl or alt, or backspace.
fn is_text(key: Key) -> bool {
    !key.ctrl && !key.alt && matches!(key.code, KeyCodeName::Char(_) | KeyCodeName::Backspace)
}

/// The input key a key map key stands for (a view's own key, always a plain one).
fn input_key_of_key(key: Key) -> Option<InputKey> {
    let modifiers = if key.ctrl {
        KeyModifiers::CONTROL
    } else {
        KeyModifiers::NONE
    };
    let code = match key.code {
        KeyCodeName::Char(c) => KeyCode::Char(c),
        KeyCodeName::Enter => KeyCode::Enter,
        KeyCodeName::Esc => KeyCode::Esc,
        KeyCodeName::Tab => KeyCode::Tab,
        KeyCodeName::BackTab => KeyCode::BackTab,
        KeyCodeName::Up => KeyCode::Up,
        KeyCodeName::Down => KeyCode::Down,
        KeyCodeName::Backspace => KeyCode::Backspace,
        _ => return None,
    };
    input_key_of(KeyEvent::new(code, modifiers))
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
    fn the_object_view_gets_its_sections_keys_and_the_main_maps_quit() {
        let map = Keymap::built_in("vim");
        let object = KeyContext::View(Section::Object);
        let press_in = |code, modifiers| action_in(press(code, modifiers), object, &map);
        let none = KeyModifiers::NONE;
        assert_eq!(
            press_in(KeyCode::BackTab, KeyModifiers::SHIFT),
            Some(Action::Input(InputKey::BackTab)),
            "shift-tab is the previous view, not up"
        );
        assert_eq!(
            press_in(KeyCode::Char('b'), KeyModifiers::CONTROL),
            Some(Action::Input(InputKey::PageUp)),
            "vim's ctrl-b pages up as the default's pageup"
        );
        assert_eq!(
            press_in(KeyCode::Char('h'), none),
            Some(Action::Input(InputKey::Left)),
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
    }

    #[test]
    fn in_a_form_characters_are_text_and_the_other_keys_go_through_the_section() {
        let text = "placement:\n  next-field: [ctrl-f]\n  toggle: [ctrl-t]\n";
        let map = Keymap::parse("mine", text, "mine.yaml");
        assert!(map.errors.is_empty(), "{:?}", map.errors);
        let form = KeyContext::Form(Section::Placement);
        let press_in = |code, modifiers, context| action_in(press(code, modifiers), context, &map);
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
            press_in(KeyCode::Char('f'), KeyModifiers::CONTROL, form),
            Some(Action::Input(InputKey::Tab)),
            "ctrl-f leaves the field as tab did"
        );
        assert_eq!(press_in(KeyCode::Tab, none, form), None, "tab moved away");
        assert_eq!(
            press_in(KeyCode::Char('t'), KeyModifiers::CONTROL, form),
            None,
            "toggling means nothing in a text field, and types no space"
        );
        assert_eq!(
            press_in(
                KeyCode::Char('t'),
                KeyModifiers::CONTROL,
                KeyContext::View(Section::Placement)
            ),
            Some(Action::Input(InputKey::Char(' '))),
            "on the list ctrl-t toggles as space did"
        );
        assert_eq!(
            press_in(KeyCode::Char('u'), KeyModifiers::CONTROL, form),
            Some(Action::Input(InputKey::ClearLine))
        );
    }
}
