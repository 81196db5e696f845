//! The chain from a template to the object on a member, as far as the fleet decides it: the
//! template (file:line), the policy that placed it on the cluster (file:line) or why none did,
//! and each override rule applied there, in order (file:line). And the way back: from a
//! member object's Karmada labels and annotations, the policy, binding and Work that put it
//! there. [`whole`] joins them with what was read of the member (the object, its pods, its
//! Events): the chain the object view draws and `status --resource -o json` prints. Pure: it
//! reads the loaded fleet or the object it is handed, never a cluster.

use serde_json::Value;

use crate::engine::fleet::Fleet;
use crate::engine::fleet::plan::{Cell, OverrideSet};

/// One link of the chain: what it is, its name, where it is written (file:line) when the
/// fleet's files say, and its status in a few words.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Link {
    /// `template`, `policy`, `override`, `binding`, `work`, `object`, `pods`, `events`.
    pub step: &'static str,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    pub status: String,
}

impl Link {
    pub fn new(step: &'static str, name: impl Into<String>, status: impl Into<String>) -> Link {
        Link {
            step,
            name: name.into(),
            at: None,
            status: status.into(),
        }
    }

    fn at(mut self, at: Option<String>) -> Link {
        self.at = at;
        self
    }
}

impl Fleet {
    /// The fleet's links for `resource` on `cluster`: template, the policy that decided the
    /// cell (or the reason it is not placed), then the override rules applied, in order.
    pub fn chain(&self, resource: usize, cluster: usize) -> Vec<Link> {
        let (Some(plan), Some(res)) = (self.plans.get(resource), self.resources.get(resource))
        else {
            return Vec::new();
        };
        let explanation = self.explain(resource, cluster);
        let mut links = vec![
            Link::new(
                "template",
                res.target.display_key(),
                format!("{} dialect", res.dialect),
            )
            .at(Some(res.source.to_string())),
        ];
        let status = if explanation.placed {
            "placed here".to_string()
        } else {
            format!("not placed here: {}", explanation.reason)
        };
        match &plan.origin {
            crate::engine::fleet::plan::Origin::Karmada { policy: Some(p) } => {
                if let Some(policy) = self.propagation.get(*p) {
                    links.push(
                        Link::new("policy", policy.display_name(), status)
                            .at(Some(policy.location.clone())),
                    );
                }
            }
            crate::engine::fleet::plan::Origin::Karmada { policy: None } => {
                links.push(Link::new("policy", "none (follows its namespace)", status));
            }
            _ => links.push(
                Link::new("policy", plan.source_key.clone(), status)
                    .at(Some(res.source.to_string())),
            ),
        }
        let Some(Cell::Placed { set, .. }) = plan.cells.get(cluster) else {
            return links;
        };
        if let Some(OverrideSet::KubeFed(_)) = plan.sets.get(*set as usize) {
            links.push(Link::new(
                "override",
                format!("{} spec.overrides for this cluster", plan.source_key),
                "applied",
            ));
        }
        if let Some(OverrideSet::Karmada(rules)) = plan.sets.get(*set as usize) {
            for &(p, r) in rules {
                let Some(policy) = self.overrides.get(p as usize) else {
                    continue;
                };
                let at = self.written_at(
                    policy.kind,
                    policy.namespace.as_deref(),
                    &policy.name,
                    &format!("/spec/overrideRules/{r}"),
                );
                links.push(
                    Link::new(
                        "override",
                        format!("{} rule {r}", policy.display_name()),
                        "applied",
                    )
                    .at(at),
                );
            }
        }
        links
    }

    /// Where the document `kind` `namespace`/`name` has `pointer` (file:line), when the fleet
    /// was read from files.
    fn written_at(
        &self,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
        pointer: &str,
    ) -> Option<String> {
        let parsed = self.parsed.as_ref()?;
        let doc = parsed.docs.iter().find(|doc| {
            doc.kind() == kind
                && doc.name() == name
                && doc
                    .value
                    .pointer("/metadata/namespace")
                    .and_then(Value::as_str)
                    == namespace
        })?;
        Some(format!("{}:{}", doc.file, doc.line_of(pointer)))
    }
}

/// Karmada's marks on a member object (`pkg/apis/policy/v1alpha1` and
/// `pkg/apis/work/v1alpha2` well-known constants): annotations since v1.8, labels before.
const KARMADA_MARKS: [(&str, &str, &str); 4] = [
    (
        "policy",
        "propagationpolicy.karmada.io/name",
        "propagationpolicy.karmada.io/namespace",
    ),
    ("policy", "clusterpropagationpolicy.karmada.io/name", ""),
    (
        "binding",
        "resourcebinding.karmada.io/name",
        "resourcebinding.karmada.io/namespace",
    ),
    ("work", "work.karmada.io/name", "work.karmada.io/namespace"),
];

/// The way back from a member object: the policy, binding and Work Karmada marked it with
/// (annotation or label), as `namespace/name`. Empty when nothing marks it.
pub fn placed_by(object: &Value) -> Vec<Link> {
    let read = |key: &str| -> Option<&str> {
        if key.is_empty() {
            return None;
        }
        ["annotations", "labels"].iter().find_map(|map| {
            object
                .pointer(&format!("/metadata/{map}"))
                .and_then(|m| m.get(key))
                .and_then(Value::as_str)
                .filter(|text| !text.is_empty())
        })
    };
    KARMADA_MARKS
        .iter()
        .filter_map(|&(step, name_key, namespace_key)| {
            let name = read(name_key)?;
            let name = match read(namespace_key) {
                Some(namespace) => format!("{namespace}/{name}"),
                None => name.to_string(),
            };
            let kind = match name_key.split('.').next() {
                Some("clusterpropagationpolicy") => "ClusterPropagationPolicy",
                Some("propagationpolicy") => "PropagationPolicy",
                Some("resourcebinding") => "ResourceBinding",
                _ => "Work",
            };
            Some(Link::new(
                step,
                format!("{kind} {name}"),
                format!("marked by {name_key}"),
            ))
        })
        .collect()
}

/// What was read of a cell's member object, for the chain's last links.
#[derive(Debug, Clone, Copy)]
pub struct ObjectRead<'a> {
    /// The object on the member; `None` when it does not hold it.
    pub object: Option<&'a Value>,
    /// The cell's sync and health, as its matrix cell shows them.
    pub concern: crate::model::Concern,
    /// A workload's pods on the member.
    pub pods: &'a [crate::engine::health::pods::PodRow],
    /// How many recent Events the member has for the object and its pods, and how many of
    /// them are warnings.
    pub events: usize,
    pub warnings: usize,
}

/// The whole chain of a cell, template to Events: the fleet's links (`Fleet::chain`; on a
/// hub without a fleet directory, the template alone), then the policy, binding and Work
/// Karmada marked the member object with (those not already named), then `object` (the
/// resource on its cluster, as `KIND/NS/NAME on CLUSTER`) with its state, its pods and its
/// Events. `read` is `None` while the member has not answered.
pub fn whole(mut links: Vec<Link>, object: String, read: Option<ObjectRead>) -> Vec<Link> {
    let Some(read) = read else {
        links.push(Link::new("object", object, "reading…"));
        return links;
    };
    if let Some(live) = read.object {
        for link in placed_by(live) {
            if !links.iter().any(|known| known.name == link.name) {
                links.push(link);
            }
        }
    }
    let status = match read.object {
        None => "not on the cluster",
        Some(_) => read.concern.as_str(),
    };
    links.push(Link::new("object", object, status));
    if !read.pods.is_empty() {
        links.push(Link::new(
            "pods",
            format!("{} pods", read.pods.len()),
            crate::engine::health::pods::summary(read.pods),
        ));
    }
    links.push(Link::new(
        "events",
        format!("{} Events", read.events),
        format!("{} warnings", read.warnings),
    ));
    links
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_object_names_its_policy_binding_and_work() {
        let object = serde_json::json!({"metadata": {
            "annotations": {
                "propagationpolicy.karmada.io/name": "web",
                "propagationpolicy.karmada.io/namespace": "shop",
                "resourcebinding.karmada.io/name": "web-deployment",
                "resourcebinding.karmada.io/namespace": "shop",
            },
            "labels": {"work.karmada.io/name": "web-5d8f", "work.karmada.io/namespace": "karmada-es-m1"},
        }});
        let names: Vec<String> = placed_by(&object).into_iter().map(|l| l.name).collect();
        assert_eq!(
            names,
            [
                "PropagationPolicy shop/web",
                "ResourceBinding shop/web-deployment",
                "Work karmada-es-m1/web-5d8f"
            ]
        );
        assert!(placed_by(&serde_json::json!({"metadata": {}})).is_empty());
    }
}
