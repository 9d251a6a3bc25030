//! Speedb: RocksDB's options, its C API and its symbols, so it runs through the same
//! code as RocksDB (crate::rocks) in a binary of its own (scripts/build-speedb.sh): the
//! two libraries cannot be linked together. Its own engine name keeps its runs apart
//! from RocksDB's in the store and beside them in `plumb compare`.

use crate::engine::{Capabilities, Durability, EngineKind};
use crate::options::EngineCommon;
use crate::rocks_options::RocksOptions;
use plumb_core::TargetError;
use serde::{Deserialize, Serialize};

/// Speedb's options: RocksDB's, under the same names and flags.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SpeedbOptions(pub RocksOptions);

impl From<SpeedbOptions> for RocksOptions {
    fn from(o: SpeedbOptions) -> RocksOptions {
        o.0
    }
}

impl EngineKind for SpeedbOptions {
    fn name(&self) -> &'static str {
        "speedb"
    }
    fn capabilities(&self) -> Capabilities {
        self.0.capabilities()
    }
    fn durability(&self) -> Durability {
        self.0.durability()
    }
    fn apply_common(&mut self, c: &EngineCommon) -> Result<(), TargetError> {
        self.0.apply_common(c)
    }
    fn validate(&self) -> Result<(), TargetError> {
        self.0.validate()
    }
    fn peak_space_factor(&self) -> f64 {
        self.0.peak_space_factor()
    }
    fn marker_file(&self) -> Option<&'static str> {
        self.0.marker_file()
    }
    fn how_to_build(&self) -> String {
        "Speedb exports RocksDB's symbols, so it has a plumb of its own: \
         `bash scripts/build-speedb.sh` builds it (~25 min once) and prints its path"
            .into()
    }
    crate::engine::feature_gated!(
        "speedb",
        crate::rocks::ROCKSDB_VERSION.to_string(),
        crate::rocks::RocksTarget
    );
}

impl From<crate::engine::NoFlags> for SpeedbOptions {
    fn from(_: crate::engine::NoFlags) -> SpeedbOptions {
        SpeedbOptions::default()
    }
}

impl crate::engine::Registered for SpeedbOptions {
    const NAME: &'static str = "speedb";
    const TITLE: &'static str = "Speedb";
    type Flags = crate::engine::NoFlags;
    fn from_flags(_: &Self::Flags, all: &crate::spec::EngineFlags) -> Self {
        SpeedbOptions(all.rocksdb.clone())
    }
    fn section() -> crate::spec::OptionSection {
        crate::spec::OptionSection {
            title: Self::TITLE,
            intro: "The RocksDB options above, with `--engine speedb` or `engine = \"speedb\"`, \
                    in the plumb that `bash scripts/build-speedb.sh` builds (Speedb exports \
                    RocksDB's symbols, so the two never share a binary)."
                .into(),
            rows: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stored and written in suite files exactly as RocksDB's options are.
    #[test]
    fn speedb_takes_rocksdb_options_under_its_own_name() {
        let o: SpeedbOptions = serde_json::from_str(r#"{"block_size": 4096}"#).unwrap();
        assert_eq!(o.0.block_size, 4096);
        assert_eq!(o.name(), "speedb");
        assert_eq!(o.capabilities(), RocksOptions::default().capabilities());
        assert!(serde_json::from_str::<SpeedbOptions>(r#"{"blok_size": 1}"#).is_err());
        assert!(o.how_to_build().contains("build-speedb.sh"));
    }
}
