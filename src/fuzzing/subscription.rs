//! Fuzz body `subscription`: a 2026-07-28 client with two subscriptions in flight (one asking
//! what the input's first byte says, one asking everything), fed any bytes in pieces with the
//! clock moving between them. Whatever comes, each subscription is acknowledged at most once
//! and as honouring no more than it asked, ends at most once, and is pending exactly until
//! it ends.

use alloc::collections::BTreeMap;
use alloc::vec;
use alloc::vec::Vec;
use core::time::Duration;

use crate::{Allowlist, Client, Config, Event, Instant, OpId, ProtocolChoice, Subscription};

/// Where the input is cut into reads; the clock moves a second at each cut.
const CUT: u8 = 0xff;

/// What one subscription asked, and what became of it.
struct Asked {
    asked: Subscription,
    acknowledged: bool,
    ended: bool,
}

/// The body: see the module's documentation.
pub fn subscription(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let mut config = Config::new(Allowlist::none());
    config.protocol = ProtocolChoice::Stateless;
    config.limits.operation_timeout = Duration::from_secs(8);
    let mut client = Client::new(config);
    let mut now = Instant::ZERO;
    let _ = client.connect(now).expect("connect");
    client.handle_input(
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"supportedVersions\":[\"2026-07-28\"],\"capabilities\":{\"tools\":{}}}}\n",
        now,
    );
    while let Some(event) = client.poll_event() {
        assert!(
            matches!(event, Event::Finished { outcome: Ok(_), .. }),
            "setup failed: {event:?}"
        );
    }
    let some = Subscription {
        tools_list_changed: flags & 1 != 0,
        prompts_list_changed: flags & 2 != 0,
        resources_list_changed: flags & 4 != 0,
        resources: if flags & 8 != 0 {
            vec!["a".into(), "file:///b".into()]
        } else {
            Vec::new()
        },
    };
    let all = Subscription {
        tools_list_changed: true,
        prompts_list_changed: true,
        resources_list_changed: true,
        resources: vec!["a".into()],
    };
    let mut asked = BTreeMap::new();
    for subscription in [some, all] {
        let op = client.listen(&subscription, now).expect("listen").id();
        asked.insert(
            op,
            Asked {
                asked: subscription,
                acknowledged: false,
                ended: false,
            },
        );
    }
    let mut out = Vec::new();
    for piece in rest.split(|&b| b == CUT) {
        client.handle_input(piece, now);
        check(&mut client, &mut asked);
        now = now.saturating_add(Duration::from_secs(1));
        client.handle_timeout(now);
        check(&mut client, &mut asked);
        while client.poll_transmit(&mut out).is_some() {}
        out.clear();
    }
    for (op, subscription) in &asked {
        assert_eq!(
            client.is_pending(*op),
            !subscription.ended,
            "{op:?} pending or not as it ended or not"
        );
    }
}

/// Takes every event, checking each against what was asked.
fn check(client: &mut Client, asked: &mut BTreeMap<OpId, Asked>) {
    while let Some(event) = client.poll_event() {
        match event {
            Event::Subscribed { op, honoured } => {
                let subscription = asked.get_mut(&op).expect("an unknown subscription");
                assert!(!subscription.acknowledged, "{op:?} acknowledged twice");
                assert!(!subscription.ended, "{op:?} acknowledged after its end");
                subscription.acknowledged = true;
                let within = (!honoured.tools_list_changed
                    || subscription.asked.tools_list_changed)
                    && (!honoured.prompts_list_changed || subscription.asked.prompts_list_changed)
                    && (!honoured.resources_list_changed
                        || subscription.asked.resources_list_changed)
                    && honoured
                        .resources
                        .iter()
                        .all(|uri| subscription.asked.resources.contains(uri));
                assert!(within, "{op:?} honours {honoured:?}, more than it asked");
            }
            Event::Finished { op, .. } => {
                let subscription = asked.get_mut(&op).expect("an unknown operation ended");
                assert!(!subscription.ended, "{op:?} ended twice");
                subscription.ended = true;
            }
            _ => {}
        }
    }
}
