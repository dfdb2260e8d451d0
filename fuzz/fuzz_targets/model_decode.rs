//! The model decoder on arbitrary bytes: `kestrel_stream::model::load` (what `inspect`,
//! `predict` and `eval` call; the MapReduce RSVM's nested models through it) and the
//! core's `LinearModel`, `slkl::Predictor`, `ReducedKernelModel` and `NoveltyModel`
//! `decode_in`, the scaler section (`Scaler::from_envelope_in`) and the calibration
//! section's class probabilities, in f32 and f64.
//!
//! Each input is tried twice: as raw file bytes (exercising length, magic, version and
//! checksum checks), and as `kind, scalar, payload…` wrapped in a valid envelope with a
//! correct CRC-32, so that the fuzzer reaches the payload decoders, which a random
//! checksum would almost always keep it from.
//!
//! Checks: no panic and no huge allocation (libFuzzer's `-rss_limit_mb`/`-malloc_limit_mb`),
//! a loaded model predicts or refuses a row cleanly, and every model that decodes
//! re-encodes to bytes that decode to the same bytes again (encode ∘ decode is a fixed
//! point after one step); a scaler that decodes transforms a row or refuses it, and
//! rebuilt from its statistics has the same scales.

#![no_main]

mod common;

use kestrel_core::Real;
use kestrel_core::dcd::LinearModel;
use kestrel_core::model::Envelope;
use kestrel_core::novelty::NoveltyModel;
use kestrel_core::reduced_set::ReducedKernelModel;
use kestrel_core::scaler::Scaler;
use kestrel_core::slkl::Predictor;
use kestrel_stream::source::Record;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    decode_everything(data);
    if let [kind, scalar, payload @ ..] = data {
        // The kind byte's high bit: a version 5 payload, with a calibration section.
        decode_everything(&common::model_envelope(kind % 6, scalar % 3, kind & 0x80 != 0, payload));
    }
});

fn decode_everything(bytes: &[u8]) {
    if let Ok(mut model) = kestrel_stream::model::load(bytes) {
        let info = model.info();
        assert_eq!(info.bytes, bytes.len());
        let _ = format!("{info:?}");
        // A row inside the model's dimension, one with an index past it, and an empty one.
        let inside = (info.dim.min(4) as u32).max(1);
        for record in [
            Record {
                label: 1.0,
                indices: (0..inside).collect(),
                values: vec![0.5; inside as usize],
                line: 1,
                ..Record::default()
            },
            Record { label: -1.0, indices: vec![u32::MAX], values: vec![1.0], line: 2, ..Record::default() },
            Record::default(),
        ] {
            let _ = model.predict(&record);
            // Class probabilities, when it has them: one per class, a distribution.
            if let Ok(Some(p)) = model.probabilities(&record) {
                assert!(p.len() >= 2 && p.iter().all(|p| (0.0..=1.0).contains(p)), "{p:?}");
                assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{p:?}");
            }
        }
    }
    round_trips::<f32>(bytes);
    round_trips::<f64>(bytes);
    if let Ok(envelope) = Envelope::parse(bytes) {
        scaler_round_trips::<f32>(&envelope);
        scaler_round_trips::<f64>(&envelope);
    }
}

fn scaler_round_trips<T: Real>(envelope: &Envelope<'_>) {
    let storage = vec![T::ZERO; Scaler::scalars_len(envelope.scaler.len() / T::BYTES)];
    let Ok(Some(scaler)) = Scaler::from_envelope_in(envelope, storage) else { return };
    let mut row = vec![T::from_f64(0.5); scaler.dim()];
    let _ = scaler.transform(&mut row);
    let again =
        Scaler::from_section_in(vec![T::ZERO; Scaler::scalars_len(scaler.dim())], scaler.dim(), scaler.section())
            .expect("a decoded scaler's statistics rebuild it");
    assert_eq!(again.scales(), scaler.scales(), "the same statistics give the same scales");
}

/// Scalars the payload can hold: postcard writes each `T` in `T::BYTES` bytes.
fn storage<T: Real>(bytes: &[u8]) -> Vec<T> {
    let payload = Envelope::parse(bytes).map_or(0, |e| e.payload.len());
    vec![T::ZERO; payload / T::BYTES + 1]
}

fn round_trips<T: Real>(bytes: &[u8]) {
    let mut out = vec![0u8; 2 * bytes.len() + 64];
    if let Ok(m) = LinearModel::<T, _>::decode_in(bytes, storage::<T>(bytes)) {
        let n = m.encode(&mut out).expect("a decoded linear model re-encodes");
        let again = LinearModel::<T, _>::decode_in(&out[..n], storage::<T>(&out[..n])).expect("re-decodes");
        let mut out2 = vec![0u8; n + 64];
        let n2 = again.encode(&mut out2).expect("re-encodes");
        assert_eq!(&out[..n], &out2[..n2], "linear model: encode/decode is not a fixed point");
        let _ = m.predict(kestrel_core::dcd::Row::Dense(&vec![T::ZERO; m.dim().min(64)]));
    }
    if let Ok(m) = Predictor::<T, _>::decode_in(bytes, storage::<T>(bytes)) {
        let n = m.encode(&mut out).expect("a decoded SLKL model re-encodes");
        let again = Predictor::<T, _>::decode_in(&out[..n], storage::<T>(&out[..n])).expect("re-decodes");
        let mut out2 = vec![0u8; n + 64];
        let n2 = again.encode(&mut out2).expect("re-encodes");
        assert_eq!(&out[..n], &out2[..n2], "SLKL model: encode/decode is not a fixed point");
        if m.dim() <= 64 {
            let _ = m.predict(&vec![T::ZERO; m.dim()]);
        }
    }
    // A novelty model also holds a norm per centre, which its bytes do not: twice the room.
    let twice = |bytes: &[u8]| [storage::<T>(bytes), storage::<T>(bytes)].concat();
    if let Ok(m) = NoveltyModel::<T, _>::decode_in(bytes, twice(bytes)) {
        let n = m.encode(&mut out).expect("a decoded novelty model re-encodes");
        let again = NoveltyModel::<T, _>::decode_in(&out[..n], twice(&out[..n])).expect("re-decodes");
        let mut out2 = vec![0u8; n + 64];
        let n2 = again.encode(&mut out2).expect("re-encodes");
        assert_eq!(&out[..n], &out2[..n2], "novelty model: encode/decode is not a fixed point");
        if m.dim() <= 64 {
            let _ = m.predict(&vec![T::ZERO; m.dim()]);
        }
    }
    if let Ok(m) = ReducedKernelModel::<T, _>::decode_in(bytes, storage::<T>(bytes)) {
        let n = m.encode(&mut out).expect("a decoded reduced-kernel model re-encodes");
        let again = ReducedKernelModel::<T, _>::decode_in(&out[..n], storage::<T>(&out[..n])).expect("re-decodes");
        let mut out2 = vec![0u8; n + 64];
        let n2 = again.encode(&mut out2).expect("re-encodes");
        assert_eq!(&out[..n], &out2[..n2], "reduced-kernel model: encode/decode is not a fixed point");
        if m.dim() <= 64 {
            let _ = m.predict(&vec![T::ZERO; m.dim()]);
        }
    }
}
