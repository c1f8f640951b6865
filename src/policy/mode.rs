//! The session's sandbox mode, as `@deepseek-ai/dsh-sandbox-policy` resolves
//! it: an explicitly approved mode > the last `sandbox/mode` session event >
//! the deployment default. A pure fold over the event list.

use serde::Deserialize;
use serde_json::Value;

use crate::policy::Mode;

#[derive(Debug, Clone, Deserialize)]
pub struct SessionEvent {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub data: Value,
}

/// The last `sandbox/mode` event's mode; events with a value outside the
/// closed vocabulary are ignored (the host's invariant rejects them too).
pub fn effective_mode(events: &[SessionEvent]) -> Option<Mode> {
    events
        .iter()
        .rev()
        .filter(|e| e.kind == "sandbox/mode")
        .find_map(|e| serde_json::from_value::<Mode>(e.data.get("mode")?.clone()).ok())
}

pub fn resolve_mode(events: &[SessionEvent], explicit: Option<Mode>, default: Mode) -> Mode {
    explicit.or_else(|| effective_mode(events)).unwrap_or(default)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ev(kind: &str, data: Value) -> SessionEvent {
        SessionEvent { kind: kind.into(), data }
    }

    #[test]
    fn an_explicit_mode_beats_the_last_event_which_beats_the_default() {
        let events = vec![
            ev("sandbox/mode", json!({"mode": "read-only"})),
            ev("turn/start", json!({})),
            ev("sandbox/mode", json!({"mode": "danger-full-access", "source": "delegation"})),
            ev("sandbox/mode", json!({"mode": "sideways"})),
        ];
        assert_eq!(resolve_mode(&events, Some(Mode::WorkspaceWrite), Mode::ReadOnly), Mode::WorkspaceWrite);
        assert_eq!(resolve_mode(&events, None, Mode::ReadOnly), Mode::DangerFullAccess);
        assert_eq!(resolve_mode(&[], None, Mode::ReadOnly), Mode::ReadOnly);
    }
}
