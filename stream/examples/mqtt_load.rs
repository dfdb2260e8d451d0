//! Load and latency for `kestrel stream` between two MQTT topics (`scripts/bench_mqtt.py`
//! runs it): publishes the lines of a file, one message each at QoS 1, at a fixed rate (or
//! as fast as the broker takes them), while it listens for the predictions `kestrel stream
//! --output mqtt://…` publishes, matches each to its row by `seq` (the row's number in the
//! stream) and prints, as one JSON object, the rate achieved and the latency from publish
//! to the prediction's arrival (p50, p99, max). With `-` for OUT_TOPIC it only publishes,
//! and ends once the broker has acknowledged every message.
//!
//! ```sh
//! cargo run --release -p kestrel-stream --example mqtt_load -- \
//!     HOST PORT IN_TOPIC OUT_TOPIC ROWS_FILE COUNT RATE_PER_SEC   # RATE 0: as fast as it goes
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rumqttc::{Client, Event, Incoming, MqttOptions, QoS};
use serde_json::Value;

/// How long to wait for the last prediction after the last row was published.
const DRAIN: Duration = Duration::from_secs(60);

struct Load {
    host: String,
    port: u16,
    input: String,
    output: String,
    rows: Vec<String>,
    rate: f64,
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [host, port, input, output, file, count, rate] = &args[..] else {
        return Err("usage: mqtt_load HOST PORT IN_TOPIC OUT_TOPIC ROWS_FILE COUNT RATE_PER_SEC".into());
    };
    let number = |text: &str, what: &str| text.parse::<f64>().map_err(|e| format!("{what} `{text}`: {e}"));
    let count = number(count, "COUNT")? as usize;
    let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
    let rows: Vec<String> = text.lines().take(count).map(String::from).collect();
    let port = port.parse().map_err(|e| format!("PORT `{port}`: {e}"))?;
    let load = Load {
        host: host.clone(),
        port,
        input: input.clone(),
        output: output.clone(),
        rows,
        rate: number(rate, "RATE")?,
    };
    let report = load.run()?;
    println!("{report}");
    Ok(())
}

impl Load {
    fn client(&self, id: &str) -> (Client, rumqttc::Connection) {
        let mut options = MqttOptions::new(id, self.host.clone(), self.port);
        options.set_keep_alive(Duration::from_secs(30)).set_inflight(1000);
        Client::new(options, 1024)
    }

    /// Publishes the rows at the rate, gathers the latencies, and reports.
    fn run(&self) -> Result<Value, String> {
        let n = self.rows.len();
        let sent: Arc<Vec<AtomicU64>> = Arc::new((0..n).map(|_| AtomicU64::new(0)).collect());
        let start = Instant::now();
        let receiver = match self.output.as_str() {
            "-" => None,
            topic => {
                let (listener, mut listening) = self.client(&format!("mqtt-load-listen-{}", std::process::id()));
                listener.subscribe(topic, QoS::AtLeastOnce).map_err(|e| e.to_string())?;
                // Wait until the subscription holds before publishing anything.
                for event in listening.iter() {
                    match event {
                        Ok(Event::Incoming(Incoming::SubAck(_))) => break,
                        Ok(_) => {}
                        Err(e) => return Err(format!("listener: {e}")),
                    }
                }
                let sent = Arc::clone(&sent);
                Some((listener, std::thread::spawn(move || listen(listening, &sent, start))))
            }
        };
        let (publisher, mut publishing) = self.client(&format!("mqtt-load-publish-{}", std::process::id()));
        // Ends once the broker acknowledged every message.
        let acknowledged = std::thread::spawn(move || {
            let mut acks = 0;
            for event in publishing.iter() {
                match event {
                    Ok(Event::Incoming(Incoming::PubAck(_))) => acks += 1,
                    Ok(_) => {}
                    Err(e) => return Err(format!("publisher: {e}")),
                }
                if acks == n {
                    return Ok(());
                }
            }
            Ok(())
        });
        let published_at = Instant::now();
        for (i, row) in self.rows.iter().enumerate() {
            if self.rate > 0.0 {
                // Sleeping past a due time makes the next rows due at once: the rate holds
                // on average, without a core spinning beside the broker and kestrel.
                let due = published_at + Duration::from_secs_f64(i as f64 / self.rate);
                std::thread::sleep(due.saturating_duration_since(Instant::now()));
            }
            sent[i].store(start.elapsed().as_nanos() as u64, Ordering::Release);
            publisher.publish(self.input.clone(), QoS::AtLeastOnce, false, row.clone()).map_err(|e| e.to_string())?;
        }
        acknowledged.join().map_err(|_| "the publisher failed".to_string())??;
        let publish_seconds = published_at.elapsed().as_secs_f64();
        let _ = publisher.disconnect();
        let latencies = match receiver {
            None => Vec::new(),
            Some((listener, receiver)) => {
                let latencies = receiver.join().map_err(|_| "the listener failed".to_string())?;
                let _ = listener.disconnect();
                latencies
            }
        };
        Ok(report(n, publish_seconds, latencies))
    }
}

/// The latency of each prediction (seconds) as it arrives, until all have or `DRAIN`
/// passed since the last.
fn listen(mut connection: rumqttc::Connection, sent: &[AtomicU64], start: Instant) -> Vec<f64> {
    let mut latencies = Vec::with_capacity(sent.len());
    while latencies.len() < sent.len() {
        match connection.recv_timeout(DRAIN) {
            Ok(Ok(Event::Incoming(Incoming::Publish(publish)))) => {
                let arrived = start.elapsed().as_nanos() as u64;
                let message: Value = serde_json::from_slice(&publish.payload).unwrap_or(Value::Null);
                let seq = message["seq"].as_u64().and_then(|s| usize::try_from(s).ok());
                if let Some(published) = seq.and_then(|s| s.checked_sub(1)).and_then(|i| sent.get(i)) {
                    latencies.push((arrived - published.load(Ordering::Acquire)) as f64 * 1e-9);
                }
            }
            Ok(Ok(_)) => {}
            Ok(Err(_)) | Err(_) => break,
        }
    }
    latencies
}

/// Rate achieved and latency percentiles, in milliseconds.
fn report(n: usize, publish_seconds: f64, mut latencies: Vec<f64>) -> Value {
    latencies.sort_by(f64::total_cmp);
    let at = |q: f64| {
        let i = ((latencies.len() as f64 - 1.0) * q).round() as usize;
        latencies.get(i).map_or(f64::NAN, |s| s * 1e3)
    };
    serde_json::json!({
        "published": n,
        "received": latencies.len(),
        "publish_rate": n as f64 / publish_seconds,
        "p50_ms": at(0.5),
        "p99_ms": at(0.99),
        "max_ms": at(1.0),
    })
}
