//! Varying one object per cluster: RFC 6902 operations as KubeFed overrides and Karmada's
//! plaintext and field overriders write them, and Karmada's overriders (image, command, args,
//! labels, annotations, field, plaintext) applied in upstream's order. It must not decide
//! which cluster gets which variation; the dialects and the fleet do.

pub mod overriders;
pub mod patch;
