//! `kestrel demo`: the main job on a built-in default — a deterministic simulated sensor
//! stream learned on the fly, as a device would, with a report of how well it went.
//!
//! The stream is a weather station sampled every 10 minutes for 20,000 samples (~139 days):
//! time of day (as sin/cos), relative humidity (a slow random walk) and wind. Two targets:
//! the temperature (nonlinear in the features, with a seasonal drift and sensor noise), for
//! windowed SLKL regression; and a "frost alarm" event, for the windowed linear SVM.
//! Both learners predict each sample before learning from it (prequential evaluation) and
//! are compared with the naive forecasts a device could make without learning.

use std::f64::consts::TAU;
use std::path::Path;
use std::time::Instant;

use crate::commands::progress_bar;
use crate::report::Report;
use crate::report::history::{self as figures, Task};
use anyhow::Result;
use kestrel_core::{Kernel, Real, Rng, dcd, slkl};
use kestrel_stream::history::History;
use kestrel_stream::online::{OnlineLearner, Prequential, WindowSlkl, WindowSvm};
use kestrel_stream::source::Record;

const SAMPLES: usize = 20_000;
const DIM: usize = 4;
const WINDOW: usize = 256;
const CENTRES: usize = 32;
const STEPS: usize = 4;
/// Standard deviation of the temperature sensor's noise, °C.
const NOISE: f64 = 0.3;

/// One reading: features and the two targets.
struct Reading {
    features: [f64; DIM],
    temperature: f64,
    frost: bool,
}

/// The simulated station: deterministic given the seed.
struct Station {
    rng: Rng,
    t: usize,
    humidity: f64,
}

impl Station {
    fn next(&mut self) -> Reading {
        let day = self.t as f64 / 144.0;
        self.t += 1;
        let phase = TAU * day.fract();
        self.humidity = (self.humidity + 0.02 * self.rng.normal::<f64>()).clamp(-1.0, 1.0);
        let wind = self.rng.uniform_in(0.0, 1.0);
        let season = -4.0 * (day / 140.0); // autumn: it gets colder
        let temperature = 8.0 + season + 6.0 * phase.sin() - 3.0 * self.humidity * phase.cos().max(0.0)
            + 2.0 * (1.0 - wind) * (-phase.sin()).max(0.0).powi(2)
            + NOISE * self.rng.normal::<f64>();
        let frost = temperature < 4.0;
        Reading { features: [phase.sin(), phase.cos(), self.humidity, wind], temperature, frost }
    }
}

/// Runs the demo on the stream drawn from `seed`, writing its report to `report` when
/// given.
pub fn run(seed: u64, report: Option<&Path>) -> Result<()> {
    let kernel = Kernel::rbf(1.0)?;
    let slkl_params = slkl::Params::new().kernel(kernel).nu(0.05).seed(seed).check()?;
    let svm_params = dcd::Params::new().c(1.0).bias(1.0).check()?;
    // Features standardised online, as `kestrel stream` does by default.
    let mut regressor = WindowSlkl::<f32>::new(WINDOW, DIM, CENTRES, slkl_params_f32(&slkl_params)?, STEPS, true)?;
    let mut classifier = WindowSvm::<f32>::new(WINDOW, DIM, svm_params_f32(&svm_params)?, STEPS, seed, true, None)?;
    let mut station = Station { rng: Rng::seed_from_u64(seed), t: 0, humidity: 0.0 };

    say!("Kestrel demo: a weather station streams {SAMPLES} readings (every 10 min, ~139 days).")?;
    say!("Each reading is predicted first, then learned from, by learners that fit a microcontroller (f32):")?;
    // As on a Cortex-M: f32 scalars, 4-byte indices, no host buffers.
    let slkl_bytes = WindowSlkl::<f32>::footprint(WINDOW, DIM, CENTRES, true).bytes::<f32>(4, false);
    let svm_bytes = WindowSvm::<f32>::footprint(WINDOW, DIM, true, 2, false).bytes::<f32>(4, false);
    say!("  temperature: windowed SLKL, last {WINDOW} readings, {CENTRES} centres   — {slkl_bytes} bytes")?;
    say!("  frost alarm: windowed linear SVM, last {WINDOW} readings          — {svm_bytes} bytes\n")?;

    let progress = progress_bar(SAMPLES as u64, "readings");
    let (mut temperature, mut alarm) = (Prequential::default(), Prequential::default());
    let (mut average, mut late, mut late_average) =
        (Prequential::default(), Prequential::default(), Prequential::default());
    let (mut majority, mut frost_seen) = (Prequential::default(), 0usize);
    let mut recent = std::collections::VecDeque::with_capacity(WINDOW);
    let mut record = Record { indices: (0u32..).take(DIM).collect(), ..Record::default() };
    let (mut temperature_history, mut alarm_history) = (History::default(), History::default());
    let start = Instant::now();
    for i in 0..SAMPLES {
        let reading = station.next();
        record.values.clear();
        record.values.extend_from_slice(&reading.features);

        record.label = reading.temperature;
        let clock = Instant::now();
        let p = regressor.test_then_train(&record)?;
        temperature_history.record(&regressor, p, reading.temperature, clock.elapsed().as_secs_f64());
        temperature.record(p, reading.temperature);
        if i >= SAMPLES / 2 {
            late.record(p, reading.temperature);
        }
        if !recent.is_empty() {
            // What a device reports without a model: the average of the same window.
            let mean = recent.iter().sum::<f64>() / recent.len() as f64;
            average.record(Some(mean), reading.temperature);
            if i >= SAMPLES / 2 {
                late_average.record(Some(mean), reading.temperature);
            }
        }
        if recent.len() == WINDOW {
            recent.pop_front();
        }
        recent.push_back(reading.temperature);

        record.label = if reading.frost { 1.0 } else { -1.0 };
        let clock = Instant::now();
        let p = classifier.test_then_train(&record)?;
        alarm_history.record(&classifier, p, record.label, clock.elapsed().as_secs_f64());
        alarm.record(p, record.label);
        majority.record(Some(if 2 * frost_seen > i { 1.0 } else { -1.0 }), record.label);
        frost_seen += usize::from(reading.frost);
        progress.inc(1);
    }
    progress.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();

    say!("What was learned, and how well (prequential: every reading predicted before it was learned):")?;
    say!(
        "  temperature RMSE {:.2} °C over all readings, {:.2} °C over the second half",
        temperature.mse().sqrt(),
        late.mse().sqrt()
    )?;
    say!(
        "    without a model (average of the same {WINDOW} readings): {:.2} °C, {:.2} °C; sensor noise alone: {NOISE:.2} °C",
        average.mse().sqrt(),
        late_average.mse().sqrt()
    )?;
    say!(
        "  frost alarm accuracy {:.1} % ({} alarms in {} readings); always answering the majority so far: {:.1} %",
        100.0 * alarm.accuracy(),
        frost_seen,
        SAMPLES,
        100.0 * majority.accuracy()
    )?;
    say!(
        "\n{} readings in {:.2} s ({:.0} readings/s, both learners), in {} bytes of learner state.",
        SAMPLES,
        seconds,
        SAMPLES as f64 / seconds,
        slkl_bytes + svm_bytes
    )?;
    say!(
        "Next: `kestrel train --input data.csv --out model.kestrel` (the learner and its settings chosen from \
         the data), `kestrel stream --help`, `kestrel budget --help`."
    )?;
    let Some(path) = report else { return Ok(()) };
    let mut page = Report::new("kestrel demo");
    page.fact("data", format!("a simulated weather station, seed {seed}: {SAMPLES} readings every 10 minutes"))
        .fact("temperature", format!("windowed SLKL (f32), window {WINDOW}, {CENTRES} centres, {slkl_bytes} bytes"))
        .fact("frost alarm", format!("windowed linear SVM (f32), window {WINDOW}, C 1, {svm_bytes} bytes"))
        .fact(
            "final figures",
            format!(
                "temperature RMSE {:.2} °C; frost alarm accuracy {:.1} % (majority so far {:.1} %); {:.0} readings/s",
                temperature.mse().sqrt(),
                100.0 * alarm.accuracy(),
                100.0 * majority.accuracy(),
                SAMPLES as f64 / seconds
            ),
        );
    figures::add(&mut page, &temperature_history, Task::Regressor, "temperature (SLKL)")?;
    figures::add(&mut page, &alarm_history, Task::Classifier, "frost alarm (SVM)")?;
    page.write(path)
}

fn slkl_params_f32(p: &slkl::ValidParams<f64>) -> Result<slkl::ValidParams<f32>> {
    Ok(slkl::Params::new().kernel(Kernel::rbf(1.0f32)?).nu(f32::from_f64(p.nu())).seed(p.seed()).check()?)
}

fn svm_params_f32(p: &dcd::ValidParams<f64>) -> Result<dcd::ValidParams<f32>> {
    Ok(dcd::Params::new().c(f32::from_f64(p.c_pos())).bias(f32::from_f64(p.bias())).check()?)
}
