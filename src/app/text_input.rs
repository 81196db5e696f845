//! Typing into a one-line text input (a filter, the palette, an editor field, a confirm
//! word): the one place a typed key changes a string. It must not know which input it is.

use super::action::InputKey;

/// Applies a text-editing key; returns whether the text changed.
pub fn edit_text(input: &mut String, key: InputKey) -> bool {
    match key {
        InputKey::Char(c) => {
            input.push(c);
            true
        }
        InputKey::Backspace => input.pop().is_some(),
        InputKey::ClearLine => {
            let had = !input.is_empty();
            input.clear();
            had
        }
        _ => false,
    }
}
