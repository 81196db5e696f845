//! Health through Lua rules: 100,000 distinct live objects of a custom kind (a certificate
//! with conditions, as operators' rules read them) assessed once each through an Argo CD-style
//! rule, each call a fresh sandboxed Lua state, then the same objects again from the cache
//! kept per object version, and the built-in Deployment health beside them for scale.
//! Reports the time per object. Run: `cargo bench --bench health` (`cargo test` assesses a
//! hundredth of them, to check it runs).

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use flotilla::engine::health::Rules;
use flotilla::engine::health::rules::Layer;
use flotilla::model::HealthKind;
use serde_json::{Value, json};

#[path = "support/mode.rs"]
mod mode;

/// A rule in the shape Argo CD's community rules take: walk the conditions, say why.
const RULE: &str = r#"
local hs = {}
if obj.status ~= nil and obj.status.conditions ~= nil then
  for i, condition in ipairs(obj.status.conditions) do
    if condition.type == "Ready" and condition.status == "False" then
      hs.status = "Degraded"
      hs.message = condition.message
      return hs
    end
    if condition.type == "Ready" and condition.status == "True" then
      hs.status = "Healthy"
      hs.message = condition.message
      return hs
    end
  end
end
hs.status = "Progressing"
hs.message = "Waiting for certificate"
return hs
"#;

fn certificate(index: usize) -> Value {
    let ready = if index.is_multiple_of(10) {
        "False"
    } else {
        "True"
    };
    json!({
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": {
            "name": format!("cert-{index}"),
            "namespace": "shop",
            "uid": format!("uid-{index}"),
            "resourceVersion": "1",
            "labels": {"app": "shop", "tier": "edge"},
        },
        "spec": {
            "secretName": format!("cert-{index}-tls"),
            "dnsNames": [format!("shop-{index}.example.com"), "www.example.com"],
            "issuerRef": {"name": "letsencrypt", "kind": "ClusterIssuer"},
        },
        "status": {
            "conditions": [
                {"type": "Issuing", "status": "False", "reason": "Done"},
                {"type": "Ready", "status": ready, "reason": "Ready",
                 "message": "Certificate is up to date and has not expired",
                 "lastTransitionTime": "2026-12-01T10:00:00Z"},
            ],
            "notAfter": "2027-03-01T10:00:00Z",
            "revision": 3,
        },
    })
}

fn deployment(index: usize) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": format!("web-{index}"), "generation": 2},
        "spec": {"replicas": 3},
        "status": {"observedGeneration": 2, "replicas": 3, "updatedReplicas": 3, "availableReplicas": 3},
    })
}

fn health_through_rules(c: &mut Criterion) {
    let count = mode::sized(100_000, 1_000);
    let objects: Vec<Value> = (0..count).map(certificate).collect();
    let rules = || {
        let layer = Layer::directory(
            "bench",
            &[(
                "cert-manager.io/Certificate/health.lua".to_string(),
                RULE.to_string(),
            )],
        )
        .expect("the rule loads");
        Rules::with_layers(vec![layer])
    };

    let cold = rules();
    let started = Instant::now();
    let degraded = objects
        .iter()
        .filter(|object| cold.assess(object).map(|h| h.kind) == Some(HealthKind::Degraded))
        .count();
    let first = started.elapsed();
    assert_eq!(degraded, count / 10, "every tenth certificate is not ready");
    let started = Instant::now();
    for object in &objects {
        black_box(cold.assess(object));
    }
    let again = started.elapsed();
    let builtin = Rules::builtin();
    let deployments: Vec<Value> = (0..count).map(deployment).collect();
    let started = Instant::now();
    for object in &deployments {
        black_box(builtin.assess(object));
    }
    let built_in = started.elapsed();
    let per = |elapsed: std::time::Duration| elapsed.as_secs_f64() * 1e6 / count as f64;
    eprintln!(
        "health of {count} objects: through a Lua rule {first:.2?} = {:.1} us per object; \
         again from the cache {again:.2?} = {:.2} us; built-in Deployments {built_in:.2?} = {:.2} us",
        per(first),
        per(again),
        per(built_in),
    );

    let mut group = c.benchmark_group("health");
    group.sample_size(10);
    let mut next = 0;
    let mut fresh = rules();
    group.bench_function("lua_rule_per_object", |b| {
        b.iter(|| {
            next = (next + 1) % count;
            if next == 0 {
                fresh = rules();
            }
            black_box(fresh.assess(black_box(&objects[next])))
        })
    });
    group.bench_function("cached_per_object", |b| {
        b.iter(|| {
            next = (next + 1) % count;
            black_box(cold.assess(black_box(&objects[next])))
        })
    });
    group.finish();
}

criterion_group!(benches, health_through_rules);
criterion_main!(benches);
