//! Shell completion against the test environment's own kubeconfig: `--context m<TAB>` in the
//! real `bash` offers the member contexts the environment wrote, read from `$KUBECONFIG`
//! without contacting any of its clusters.

mod harness;

use kube::config::Kubeconfig;

use harness::completion::bash_candidates;

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn context_completion_offers_the_member_contexts_of_the_testenv_kubeconfig() {
    let env = harness::env();
    let kubeconfig = Kubeconfig::read_from(&env.kubeconfig_path).expect("read the kubeconfig");
    let expected: Vec<String> = kubeconfig
        .contexts
        .iter()
        .map(|context| context.name.clone())
        .filter(|name| name.starts_with('m'))
        .collect();
    let dir = tempfile::tempdir().expect("temp dir");
    let offered = bash_candidates(
        dir.path(),
        Some(&env.kubeconfig_path),
        &["plan", "--context", "m"],
    );
    assert_eq!(offered, expected);
    for member in &env.members {
        assert!(
            offered.contains(member),
            "{member} not offered: {offered:?}"
        );
    }
    assert!(!offered.iter().any(|name| name == "hub"), "{offered:?}");
}
