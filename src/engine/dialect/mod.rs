//! The federation APIs, one module each: their documents (parsing with located errors) and
//! their upstream semantics (which policy claims a template, how each scheduler places it).
//! Karmada and KubeFed place resources of a fleet directory; OCM Placements are evaluated for
//! the hub editor. A dialect must not render objects, read files or know another dialect.

pub mod api_groups;
pub mod karmada;
pub mod karmada_behaviour;
pub mod kubefed;
pub mod ocm;
