//! The core workload's properties, named and defaulted as YCSB's `CoreWorkload` (and
//! `Client` for the counts) name and default them, so a YCSB command line's `-p
//! name=value` pairs and workload files carry over to plumb unchanged.

use super::YcsbError;
use std::fmt;

/// Which key an operation on an existing record picks (`requestdistribution`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestDistribution {
    /// Every loaded key equally likely.
    Uniform,
    /// Scrambled zipfian: a few hot keys, scattered over the key space.
    Zipfian,
    /// Skewed towards the most recently inserted keys (workload D).
    Latest,
    /// A hot set of `hotspotdatafraction` of the keys gets `hotspotopnfraction` of ops.
    Hotspot,
}

/// How long a scan is (`scanlengthdistribution`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanLengthDistribution {
    /// Uniform over `minscanlength..=maxscanlength`.
    Uniform,
    /// Zipfian over the same range, short scans most likely.
    Zipfian,
}

/// How long each field's value is (`fieldlengthdistribution`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldLengthDistribution {
    /// Always `fieldlength` bytes.
    Constant,
    /// Uniform over `minfieldlength..=fieldlength`.
    Uniform,
    /// Zipfian over `minfieldlength..=fieldlength`.
    Zipfian,
}

/// Whether key numbers are hashed into key names (`insertorder`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InsertOrder {
    /// FNV-hashed: a load writes all over the key space.
    Hashed,
    /// The key number as is: a load appends in key order (with enough zero padding).
    Ordered,
}

macro_rules! names {
    ($t:ty { $($v:ident = $s:literal),* $(,)? }) => {
        impl $t {
            /// The value as YCSB's property files write it.
            pub fn name(self) -> &'static str {
                match self { $(Self::$v => $s),* }
            }
            fn parse(prop: &str, value: &str) -> Result<Self, YcsbError> {
                match value {
                    $($s => Ok(Self::$v),)*
                    _ => Err(bad(prop, value, concat!("use one of:", $(" ", $s),*))),
                }
            }
        }
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

names!(RequestDistribution {
    Uniform = "uniform",
    Zipfian = "zipfian",
    Latest = "latest",
    Hotspot = "hotspot",
});
names!(ScanLengthDistribution {
    Uniform = "uniform",
    Zipfian = "zipfian",
});
names!(FieldLengthDistribution {
    Constant = "constant",
    Uniform = "uniform",
    Zipfian = "zipfian",
});
names!(InsertOrder {
    Hashed = "hashed",
    Ordered = "ordered",
});

fn bad(name: &str, value: &str, allowed: &str) -> YcsbError {
    YcsbError::BadValue {
        name: name.to_string(),
        value: value.to_string(),
        allowed: allowed.to_string(),
    }
}

/// The properties [`CoreParams::set`] accepts, in YCSB's spelling.
pub const PROPERTIES: &[&str] = &[
    "workload",
    "table",
    "recordcount",
    "operationcount",
    "fieldcount",
    "fieldlength",
    "minfieldlength",
    "fieldlengthdistribution",
    "readallfields",
    "writeallfields",
    "readproportion",
    "updateproportion",
    "insertproportion",
    "scanproportion",
    "readmodifywriteproportion",
    "requestdistribution",
    "minscanlength",
    "maxscanlength",
    "scanlengthdistribution",
    "insertorder",
    "zeropadding",
    "insertstart",
    "insertcount",
    "hotspotdatafraction",
    "hotspotopnfraction",
    "zipfianconstant",
];

/// The core workload's parameters. Field names are YCSB's property names so the mapping
/// from a YCSB command line is obvious; [`CoreParams::default`] holds YCSB's defaults
/// and [`CoreParams::preset`] its workload files.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreParams {
    /// The table (`table`, default `usertable`).
    pub table: String,
    /// Records loaded (`recordcount`). YCSB's own default is 0, which its core workload
    /// turns into `Integer.MAX_VALUE` keys; plumb defaults to the 1000 every workload
    /// file sets, and refuses 0.
    pub recordcount: u64,
    /// Operations in a run phase (`operationcount`, 1000 as in the workload files); it
    /// also sizes the zipfian key space for the keys inserts will add.
    pub operationcount: u64,
    /// Fields per record (`fieldcount`, default 10).
    pub fieldcount: u32,
    /// Bytes per field value, or the most (`fieldlength`, default 100).
    pub fieldlength: u32,
    /// The fewest bytes per field value under a non-constant length distribution
    /// (`minfieldlength`, default 1).
    pub minfieldlength: u32,
    /// Field value lengths (`fieldlengthdistribution`, default constant).
    pub fieldlengthdistribution: FieldLengthDistribution,
    /// Reads (and scans, and the read of a read-modify-write) want every field
    /// (`readallfields`, default true); else one field chosen uniformly.
    pub readallfields: bool,
    /// Updates write every field (`writeallfields`, default false); else one field
    /// chosen uniformly.
    pub writeallfields: bool,
    /// Share of reads (`readproportion`, default 0.95).
    pub readproportion: f64,
    /// Share of updates (`updateproportion`, default 0.05).
    pub updateproportion: f64,
    /// Share of inserts of new records (`insertproportion`, default 0).
    pub insertproportion: f64,
    /// Share of scans (`scanproportion`, default 0).
    pub scanproportion: f64,
    /// Share of read-modify-writes (`readmodifywriteproportion`, default 0).
    pub readmodifywriteproportion: f64,
    /// Key choice for existing records (`requestdistribution`, default uniform).
    pub requestdistribution: RequestDistribution,
    /// The shortest scan (`minscanlength`, default 1).
    pub minscanlength: u32,
    /// The longest scan (`maxscanlength`, default 1000).
    pub maxscanlength: u32,
    /// Scan lengths (`scanlengthdistribution`, default uniform).
    pub scanlengthdistribution: ScanLengthDistribution,
    /// Hashed or ordered key names (`insertorder`, default hashed).
    pub insertorder: InsertOrder,
    /// Digits the key number is zero-padded to (`zeropadding`, default 1: none).
    pub zeropadding: u32,
    /// The first key number this load inserts (`insertstart`, default 0), for loading
    /// one table from several clients.
    pub insertstart: u64,
    /// How many keys this load inserts (`insertcount`); unset means `recordcount -
    /// insertstart`, as YCSB's core workload computes it.
    pub insertcount: Option<u64>,
    /// The hot set's share of the keys under `hotspot` (`hotspotdatafraction`, 0.2).
    pub hotspotdatafraction: f64,
    /// The share of operations that go to the hot set (`hotspotopnfraction`, 0.8).
    pub hotspotopnfraction: f64,
    /// The zipfian exponent of every zipfian in the workload (keys, scan and field
    /// lengths; `zipfianconstant`, 0.99). Not a YCSB property: YCSB fixes it at
    /// `ZipfianGenerator.ZIPFIAN_CONSTANT`; plumb lets skew be varied.
    pub zipfianconstant: f64,
}

impl Default for CoreParams {
    fn default() -> Self {
        CoreParams {
            table: "usertable".into(),
            recordcount: 1000,
            operationcount: 1000,
            fieldcount: 10,
            fieldlength: 100,
            minfieldlength: 1,
            fieldlengthdistribution: FieldLengthDistribution::Constant,
            readallfields: true,
            writeallfields: false,
            readproportion: 0.95,
            updateproportion: 0.05,
            insertproportion: 0.0,
            scanproportion: 0.0,
            readmodifywriteproportion: 0.0,
            requestdistribution: RequestDistribution::Uniform,
            minscanlength: 1,
            maxscanlength: 1000,
            scanlengthdistribution: ScanLengthDistribution::Uniform,
            insertorder: InsertOrder::Hashed,
            zeropadding: 1,
            insertstart: 0,
            insertcount: None,
            hotspotdatafraction: 0.2,
            hotspotopnfraction: 0.8,
            zipfianconstant: super::ZIPFIAN_CONSTANT,
        }
    }
}

fn parse_u64(name: &str, value: &str, min: u64) -> Result<u64, YcsbError> {
    match value.trim().parse::<u64>() {
        Ok(v) if v >= min => Ok(v),
        _ => Err(bad(name, value, &format!("an integer >= {min}"))),
    }
}

fn parse_u32(name: &str, value: &str, min: u32) -> Result<u32, YcsbError> {
    match value.trim().parse::<u32>() {
        Ok(v) if v >= min => Ok(v),
        _ => Err(bad(
            name,
            value,
            &format!("an integer from {min} to {}", u32::MAX),
        )),
    }
}

fn parse_fraction(name: &str, value: &str, allowed: &str) -> Result<f64, YcsbError> {
    match value.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(bad(name, value, allowed)),
    }
}

fn parse_bool(name: &str, value: &str) -> Result<bool, YcsbError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(bad(name, value, "true or false")),
    }
}

impl CoreParams {
    /// YCSB's workload file `workloads/workload<letter>` (a–f, either case): the
    /// standard mixes every published YCSB result names.
    pub fn preset(letter: char) -> Result<CoreParams, YcsbError> {
        let mut p = CoreParams::default();
        let (read, update, insert, scan, rmw, dist) = match letter.to_ascii_lowercase() {
            // Update heavy.
            'a' => (0.5, 0.5, 0.0, 0.0, 0.0, RequestDistribution::Zipfian),
            // Read mostly.
            'b' => (0.95, 0.05, 0.0, 0.0, 0.0, RequestDistribution::Zipfian),
            // Read only.
            'c' => (1.0, 0.0, 0.0, 0.0, 0.0, RequestDistribution::Zipfian),
            // Read latest.
            'd' => (0.95, 0.0, 0.05, 0.0, 0.0, RequestDistribution::Latest),
            // Short ranges.
            'e' => (0.0, 0.0, 0.05, 0.95, 0.0, RequestDistribution::Zipfian),
            // Read-modify-write.
            'f' => (0.5, 0.0, 0.0, 0.0, 0.5, RequestDistribution::Zipfian),
            _ => {
                return Err(YcsbError::UnknownWorkload {
                    given: letter.to_string(),
                })
            }
        };
        p.readproportion = read;
        p.updateproportion = update;
        p.insertproportion = insert;
        p.scanproportion = scan;
        p.readmodifywriteproportion = rmw;
        p.requestdistribution = dist;
        p.readallfields = true;
        p.recordcount = 1000;
        p.operationcount = 1000;
        if letter.eq_ignore_ascii_case(&'e') {
            p.maxscanlength = 100;
            p.scanlengthdistribution = ScanLengthDistribution::Uniform;
        }
        Ok(p)
    }

    /// Sets one property as YCSB's `-p name=value` would, checking the value's form
    /// (cross-property rules wait for [`CoreParams::validate`], since a command line
    /// may set `insertcount` before `recordcount`).
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), YcsbError> {
        let v = value.trim();
        match name {
            "workload" => {
                if v != "site.ycsb.workloads.CoreWorkload" {
                    return Err(bad(
                        name,
                        value,
                        "plumb runs YCSB's core workload only: site.ycsb.workloads.CoreWorkload",
                    ));
                }
            }
            "table" => {
                let ok = v
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if !ok || v.len() > 63 {
                    return Err(bad(
                        name,
                        value,
                        "a plain SQL identifier: a letter or '_', then letters, digits or '_', \
                         at most 63 characters",
                    ));
                }
                self.table = v.to_string();
            }
            "recordcount" => self.recordcount = parse_u64(name, v, 1)?,
            "operationcount" => self.operationcount = parse_u64(name, v, 0)?,
            "fieldcount" => self.fieldcount = parse_u32(name, v, 1)?,
            "fieldlength" => self.fieldlength = parse_u32(name, v, 1)?,
            "minfieldlength" => self.minfieldlength = parse_u32(name, v, 1)?,
            "fieldlengthdistribution" => {
                self.fieldlengthdistribution = FieldLengthDistribution::parse(name, v)?
            }
            "readallfields" => self.readallfields = parse_bool(name, v)?,
            "writeallfields" => self.writeallfields = parse_bool(name, v)?,
            "readproportion"
            | "updateproportion"
            | "insertproportion"
            | "scanproportion"
            | "readmodifywriteproportion" => {
                let x = parse_fraction(name, v, "a proportion from 0 to 1")?;
                match name {
                    "readproportion" => self.readproportion = x,
                    "updateproportion" => self.updateproportion = x,
                    "insertproportion" => self.insertproportion = x,
                    "scanproportion" => self.scanproportion = x,
                    _ => self.readmodifywriteproportion = x,
                }
            }
            "requestdistribution" => {
                self.requestdistribution = RequestDistribution::parse(name, v)?
            }
            "minscanlength" => self.minscanlength = parse_u32(name, v, 1)?,
            "maxscanlength" => self.maxscanlength = parse_u32(name, v, 1)?,
            "scanlengthdistribution" => {
                self.scanlengthdistribution = ScanLengthDistribution::parse(name, v)?
            }
            "insertorder" => self.insertorder = InsertOrder::parse(name, v)?,
            "zeropadding" => self.zeropadding = parse_u32(name, v, 0)?,
            "insertstart" => self.insertstart = parse_u64(name, v, 0)?,
            "insertcount" => self.insertcount = Some(parse_u64(name, v, 1)?),
            "hotspotdatafraction" => {
                self.hotspotdatafraction =
                    parse_fraction(name, v, "a fraction of the keys from 0 to 1")?
            }
            "hotspotopnfraction" => {
                self.hotspotopnfraction =
                    parse_fraction(name, v, "a fraction of the operations from 0 to 1")?
            }
            "zipfianconstant" => match v.parse::<f64>() {
                Ok(t) if t > 0.0 && t < 1.0 => self.zipfianconstant = t,
                _ => {
                    return Err(bad(
                        name,
                        value,
                        "a number between 0 and 1, exclusive (Gray's zipfian generator \
                         needs theta < 1); YCSB uses 0.99",
                    ))
                }
            },
            _ => {
                return Err(YcsbError::UnknownProperty {
                    name: name.to_string(),
                    known: PROPERTIES.join(", "),
                })
            }
        }
        Ok(())
    }

    /// Sets `name=value` pairs, as a YCSB workload file or `-p` list holds them.
    pub fn set_all<'a>(
        &mut self,
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<(), YcsbError> {
        for (k, v) in pairs {
            self.set(k, v)?;
        }
        Ok(())
    }

    /// How many keys the load inserts: `insertcount`, or `recordcount - insertstart`.
    pub fn insert_count(&self) -> u64 {
        self.insertcount
            .unwrap_or(self.recordcount.saturating_sub(self.insertstart))
    }

    /// The key numbers `requestdistribution=zipfian` draws from, `min..=max`: YCSB sizes
    /// the space for the keys the run's inserts will add (twice the expected number, its
    /// "fudge factor"), so the hot keys stay put as the table grows; a key not inserted
    /// yet is drawn again.
    pub fn zipfian_key_space(&self) -> (i64, i64) {
        let start = self.insertstart as i64;
        let expected = (self.operationcount as f64 * self.insertproportion * 2.0) as i32;
        (
            start,
            start + self.insert_count() as i64 + i64::from(expected),
        )
    }

    /// The rules between properties: what YCSB exits on or fails on later, and what
    /// plumb's generators need, checked once before a run starts.
    pub fn validate(&self) -> Result<(), YcsbError> {
        let inv = |s: String| Err(YcsbError::Invalid(s));
        if self.recordcount == 0 {
            return inv("recordcount must be at least 1".into());
        }
        if self.recordcount > i32::MAX as u64 {
            // YCSB keeps key numbers in Java ints in places (nextKeynum's intValue()).
            return inv(format!(
                "recordcount {} is more than YCSB's key numbers hold ({})",
                self.recordcount,
                i32::MAX
            ));
        }
        let count = self.insert_count();
        if count == 0 {
            return inv(format!(
                "insertstart {} leaves no keys of recordcount {} to insert",
                self.insertstart, self.recordcount
            ));
        }
        if self.insertstart + count > self.recordcount {
            return inv(format!(
                "insertstart {} + insertcount {count} is more than recordcount {}; \
                 recordcount must cover every key a load inserts",
                self.insertstart, self.recordcount
            ));
        }
        let props = [
            self.readproportion,
            self.updateproportion,
            self.insertproportion,
            self.scanproportion,
            self.readmodifywriteproportion,
        ];
        if props.iter().all(|p| *p <= 0.0) {
            return inv(
                "every operation proportion is 0; set readproportion, updateproportion, \
                 insertproportion, scanproportion or readmodifywriteproportion above 0"
                    .into(),
            );
        }
        if self.minscanlength > self.maxscanlength {
            return inv(format!(
                "minscanlength {} is more than maxscanlength {}",
                self.minscanlength, self.maxscanlength
            ));
        }
        if self.fieldlengthdistribution != FieldLengthDistribution::Constant
            && self.minfieldlength > self.fieldlength
        {
            return inv(format!(
                "minfieldlength {} is more than fieldlength {}",
                self.minfieldlength, self.fieldlength
            ));
        }
        if self.requestdistribution == RequestDistribution::Hotspot {
            let hot = (count as f64 * self.hotspotdatafraction) as i32 as i64;
            let cold = count as i64 - hot;
            if hot == 0 && self.hotspotopnfraction > 0.0 {
                return inv(format!(
                    "hotspotdatafraction {} of {count} keys is an empty hot set, yet \
                     hotspotopnfraction {} sends operations to it",
                    self.hotspotdatafraction, self.hotspotopnfraction
                ));
            }
            if cold == 0 && self.hotspotopnfraction < 1.0 {
                return inv(format!(
                    "hotspotdatafraction {} leaves no cold keys, yet hotspotopnfraction {} \
                     sends operations to them",
                    self.hotspotdatafraction, self.hotspotopnfraction
                ));
            }
        }
        Ok(())
    }

    /// Every property and its value in YCSB's spelling, for a run's record: what ran
    /// must be readable without knowing plumb's defaults.
    pub fn properties(&self) -> Vec<(&'static str, String)> {
        vec![
            ("workload", "site.ycsb.workloads.CoreWorkload".into()),
            ("table", self.table.clone()),
            ("recordcount", self.recordcount.to_string()),
            ("operationcount", self.operationcount.to_string()),
            ("fieldcount", self.fieldcount.to_string()),
            ("fieldlength", self.fieldlength.to_string()),
            ("minfieldlength", self.minfieldlength.to_string()),
            (
                "fieldlengthdistribution",
                self.fieldlengthdistribution.to_string(),
            ),
            ("readallfields", self.readallfields.to_string()),
            ("writeallfields", self.writeallfields.to_string()),
            ("readproportion", self.readproportion.to_string()),
            ("updateproportion", self.updateproportion.to_string()),
            ("insertproportion", self.insertproportion.to_string()),
            ("scanproportion", self.scanproportion.to_string()),
            (
                "readmodifywriteproportion",
                self.readmodifywriteproportion.to_string(),
            ),
            ("requestdistribution", self.requestdistribution.to_string()),
            ("minscanlength", self.minscanlength.to_string()),
            ("maxscanlength", self.maxscanlength.to_string()),
            (
                "scanlengthdistribution",
                self.scanlengthdistribution.to_string(),
            ),
            ("insertorder", self.insertorder.to_string()),
            ("zeropadding", self.zeropadding.to_string()),
            ("insertstart", self.insertstart.to_string()),
            ("insertcount", self.insert_count().to_string()),
            ("hotspotdatafraction", self.hotspotdatafraction.to_string()),
            ("hotspotopnfraction", self.hotspotopnfraction.to_string()),
            ("zipfianconstant", self.zipfianconstant.to_string()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_carry_the_workload_files_mixes() {
        let sum = |p: &CoreParams| {
            p.readproportion
                + p.updateproportion
                + p.insertproportion
                + p.scanproportion
                + p.readmodifywriteproportion
        };
        for l in ['a', 'b', 'c', 'd', 'e', 'f', 'A'] {
            let p = CoreParams::preset(l).unwrap();
            assert!((sum(&p) - 1.0).abs() < 1e-12, "{l}");
            p.validate().unwrap();
        }
        let d = CoreParams::preset('d').unwrap();
        assert_eq!(d.requestdistribution, RequestDistribution::Latest);
        assert_eq!(d.insertproportion, 0.05);
        let e = CoreParams::preset('e').unwrap();
        assert_eq!((e.scanproportion, e.maxscanlength), (0.95, 100));
        assert_eq!(CoreParams::preset('a').unwrap().maxscanlength, 1000);
        assert_eq!(
            CoreParams::preset('f').unwrap().readmodifywriteproportion,
            0.5
        );
        assert!(matches!(
            CoreParams::preset('g'),
            Err(YcsbError::UnknownWorkload { .. })
        ));
    }

    #[test]
    fn set_reads_every_property_and_names_what_is_wrong() {
        let mut p = CoreParams::default();
        p.set("recordcount", "5000").unwrap();
        p.set("requestdistribution", "latest").unwrap();
        p.set("readallfields", "FALSE").unwrap();
        p.set("insertcount", "100").unwrap();
        p.set("zipfianconstant", "0.8").unwrap();
        assert_eq!(p.recordcount, 5000);
        assert_eq!(p.requestdistribution, RequestDistribution::Latest);
        assert!(!p.readallfields);
        assert_eq!(p.insert_count(), 100);
        for (k, v, must) in [
            (
                "requestdistribution",
                "exponential",
                "uniform zipfian latest hotspot",
            ),
            ("readproportion", "1.5", "proportion"),
            ("fieldcount", "0", "from 1"),
            ("readallfields", "yes", "true or false"),
            ("zipfianconstant", "1", "exclusive"),
            ("table", "user table", "identifier"),
            (
                "fieldlengthdistribution",
                "histogram",
                "constant uniform zipfian",
            ),
        ] {
            let e = p.set(k, v).unwrap_err().to_string();
            assert!(e.contains(k) && e.contains(v) && e.contains(must), "{e}");
        }
        let e = p.set("readproprtion", "0.5").unwrap_err().to_string();
        assert!(
            e.contains("readproprtion") && e.contains("readproportion"),
            "{e}"
        );
        // Every listed property is accepted with its current value.
        for (k, v) in CoreParams::default().properties() {
            p.set(k, &v).unwrap_or_else(|e| panic!("{k}={v}: {e}"));
        }
        assert_eq!(p, {
            let mut d = CoreParams::default();
            d.insertcount = Some(d.recordcount);
            d
        });
    }

    #[test]
    fn validate_refuses_what_cannot_run() {
        let mut p = CoreParams {
            insertstart: 900,
            insertcount: Some(200),
            ..CoreParams::default()
        };
        assert!(p
            .validate()
            .unwrap_err()
            .to_string()
            .contains("recordcount"));
        p.insertcount = None;
        p.validate().unwrap();
        assert_eq!(p.insert_count(), 100);
        let p = CoreParams {
            readproportion: 0.0,
            updateproportion: 0.0,
            ..CoreParams::default()
        };
        assert!(p.validate().is_err());
        let p = CoreParams {
            minscanlength: 10,
            maxscanlength: 5,
            ..CoreParams::default()
        };
        assert!(p.validate().is_err());
        let p = CoreParams {
            requestdistribution: RequestDistribution::Hotspot,
            hotspotdatafraction: 0.0001,
            ..CoreParams::default()
        };
        assert!(p.validate().unwrap_err().to_string().contains("hot set"));
    }
}
