//! The shape of a pluggable scheme and of a family of them; the `registry` module lists every
//! family (congestion controls, host path selectors, message gates, credit schemes, loss-recovery
//! modes, workloads and topologies).
//!
//! A scheme is a type implementing [`Scheme`] in its own file: its registry name (the file
//! stem, so scenario, CLI and source agree), a one-line summary, its parameter struct (serde,
//! paper defaults), the numeric ranges its parameters accept ([`Limit`], enforced for every
//! scheme by [`validate_params`]) and its constructor. A *family* of schemes (all congestion
//! controls, say) is declared once with [`scheme_family!`], which generates from one row per
//! scheme:
//! - the scenario selection enum (`[transport.cc] name = "smartt", ...`) with its
//!   deserializer (errors name the key and list the allowed names) and serializer,
//! - the built-scheme enum for static dispatch (no `dyn` per packet) and a `dispatch!` macro
//!   that forwards a trait's methods to every variant,
//! - `build`, `validate` (range limits, then the scheme's own cross-checks),
//! - the family's registry rows ([`SchemeRow`]: name, summary, parameters with their defaults
//!   and allowed ranges), which `fabricsim list`, the book's catalogue and the scenario's error
//!   messages all read.
//!
//! Adding a scheme is therefore one new file implementing the family's trait and [`Scheme`],
//! plus one row in the family's `scheme_family!` invocation (see CONTRIBUTING.md).
//!
//! The parameter helpers both macros use live here too, so that every layer can declare schemes
//! without reaching up to `scenario` (which re-exports them): [`deserialize_params`] (keeps the
//! path of a bad key), [`NoParams`] (a scheme without parameters) and `tagged_config!` (the
//! same tag-keyed deserializer for selections that are not a `scheme_family!`, e.g. workloads).

use crate::error::{Error, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fmt::Debug;

/// `skip_serializing_if` for an option left at its default: resolved scenarios leave it out,
/// so adding an option keeps every existing scenario's resolved text (and fingerprints).
pub fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// A numeric range one parameter accepts (inclusive; `None` parameters are not checked).
#[derive(Clone, Copy, Debug)]
pub struct Limit {
    /// Parameter key inside the scheme's table.
    pub key: &'static str,
    /// Smallest allowed value.
    pub min: f64,
    /// Largest allowed value.
    pub max: f64,
}

impl Limit {
    /// `key` must lie in `min..=max`.
    pub const fn new(key: &'static str, min: f64, max: f64) -> Limit {
        Limit { key, min, max }
    }

    /// The range as listings and messages show it: `min..=max`.
    pub fn range(&self) -> String {
        format!("{}..={}", crate::units::show_num(self.min), crate::units::show_num(self.max))
    }
}

/// A pluggable scheme of one family. `Ctx` is what the family hands every constructor (a
/// connection's path and random stream, say).
pub trait Scheme<Ctx: ?Sized>: Sized {
    /// Registry name: the value of the family's selection key (`cc = "smartt"`).
    const NAME: &'static str;
    /// One line for `fabricsim list` and the book's catalogue.
    const SUMMARY: &'static str;
    /// Parameters, with the paper's values as defaults.
    type Params: Default + Clone + Debug + Serialize + DeserializeOwned;
    /// Ranges of the numeric parameters, checked before [`Scheme::check`].
    const LIMITS: &'static [Limit] = &[];
    /// Scenario overrides (`--set` syntax) besides its selection that give a small run in which
    /// this scheme does its work: the parts it needs beside it (a loss-recovery mode's own
    /// congestion control, switches that trim, a lossless fabric). The fingerprint and
    /// bad-value tests run every registered scheme this way, so a new scheme brings its own
    /// test cases. Default: none needed.
    const EXAMPLE: &'static [&'static str] = &[];
    /// Cross-checks the ranges cannot express; `key` is the family's table (`transport.cc`).
    fn check(_p: &Self::Params, _key: &str) -> Result<()> {
        Ok(())
    }
    /// Builds one instance.
    fn build(p: &Self::Params, ctx: &mut Ctx) -> Self;
    /// Before the scheme's table is parsed: fill the keys it leaves out from a named preset
    /// the table selects (SMaRTT's `preset = "htsim"`), so explicit keys still win and the
    /// resolved scenario spells every value out. Default: no presets.
    fn fill_preset(_table: &mut toml::Table) {}
}

/// Large schemes are boxed inside their family's enum, so the enum stays as small as the small
/// schemes; a boxed scheme is registered exactly like the scheme itself.
impl<Ctx: ?Sized, T: Scheme<Ctx>> Scheme<Ctx> for Box<T> {
    const NAME: &'static str = T::NAME;
    const SUMMARY: &'static str = T::SUMMARY;
    type Params = T::Params;
    const LIMITS: &'static [Limit] = T::LIMITS;
    const EXAMPLE: &'static [&'static str] = T::EXAMPLE;
    fn check(p: &Self::Params, key: &str) -> Result<()> {
        T::check(p, key)
    }
    fn build(p: &Self::Params, ctx: &mut Ctx) -> Self {
        Box::new(T::build(p, ctx))
    }
    fn fill_preset(table: &mut toml::Table) {
        T::fill_preset(table)
    }
}

/// A scheme built in two halves from the same parameters, living at two places (a loss-recovery
/// mode's sender half at the sending host and receiver half at the receiving host). The
/// [`Scheme`] impl builds the first half; this builds the second.
pub trait Companion<Ctx: ?Sized>: Scheme<Ctx> {
    /// The second half.
    type Half: Clone + Debug;
    /// Builds the second half.
    fn build_half(p: &Self::Params) -> Self::Half;
}

/// A boxed two-half scheme builds its second half as the scheme itself does.
impl<Ctx: ?Sized, T: Companion<Ctx>> Companion<Ctx> for Box<T> {
    type Half = T::Half;
    fn build_half(p: &Self::Params) -> Self::Half {
        T::build_half(p)
    }
}

/// One parameter as the registry lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamRow {
    /// Key inside the scheme's table.
    pub key: String,
    /// Default value as TOML (`-` when unset by default).
    pub default: String,
    /// Allowed range (`min..=max`), when the scheme declares one.
    pub allowed: Option<String>,
}

/// One scheme as the registry lists it.
#[derive(Clone, Copy, Debug)]
pub struct SchemeRow {
    /// Registry name.
    pub name: &'static str,
    /// One-line summary.
    pub summary: &'static str,
    /// Its parameters (computed from the default parameter struct).
    pub params: fn() -> Vec<ParamRow>,
    /// Overrides besides its selection for a small run that exercises it ([`Scheme::EXAMPLE`]).
    pub example: &'static [&'static str],
}

/// One family of schemes.
#[derive(Clone, Copy, Debug)]
pub struct Family {
    /// Title for listings.
    pub title: &'static str,
    /// The scenario key that selects a scheme (`transport.cc`).
    pub key: &'static str,
    /// Its schemes.
    pub schemes: &'static [SchemeRow],
}

/// The rows of scheme `T`'s parameters: every key of its default parameter table, in order.
pub fn param_rows<P: Default + Serialize>(limits: &'static [Limit]) -> Vec<ParamRow> {
    let table = match toml::Value::try_from(P::default()) {
        Ok(toml::Value::Table(t)) => t,
        _ => Default::default(),
    };
    let mut keys: Vec<String> = table.keys().cloned().collect();
    // Parameters that default to unset (`Option` = None) do not serialize: list them from the
    // limits so that the listing still shows their range.
    for l in limits {
        if !keys.iter().any(|k| k == l.key) {
            keys.push(l.key.to_string());
        }
    }
    keys.into_iter()
        .map(|k| ParamRow {
            default: table.get(&k).map_or("-".to_string(), |v| v.to_string()),
            allowed: limits.iter().find(|l| l.key == k).map(Limit::range),
            key: k,
        })
        .collect()
}

/// Checks the numeric parameters of `p` against `limits`; errors name `key.param` (and
/// `key.param[i]` for the elements of a list of numbers).
pub fn validate_params<P: Serialize>(p: &P, limits: &[Limit], key: &str) -> Result<()> {
    if limits.is_empty() {
        return Ok(());
    }
    // TOML keeps NaN and infinities, but has no integers above i64::MAX: a byte count of 2^64−1
    // (`"16EiB"`) fails there, so such a table is read through JSON (which has them).
    let t: toml::Table = match toml::Value::try_from(p) {
        Ok(toml::Value::Table(t)) => t,
        _ => match serde_json::to_value(p) {
            Ok(serde_json::Value::Object(m)) => m.into_iter().filter_map(|(k, v)| json_number_or_list(&v).map(|v| (k, v))).collect(),
            _ => return Ok(()),
        },
    };
    let number = |v: &toml::Value| match v {
        toml::Value::Integer(i) => Some(*i as f64),
        toml::Value::Float(f) => Some(*f),
        _ => None,
    };
    let check = |l: &Limit, v: f64, at: String| {
        if v.is_finite() && v >= l.min && v <= l.max {
            Ok(())
        } else {
            Err(Error::invalid(at, format!("{}: allowed {}", crate::units::show_num(v), l.range())))
        }
    };
    for l in limits {
        match t.get(l.key) {
            Some(toml::Value::Array(a)) => {
                for (i, v) in a.iter().enumerate() {
                    if let Some(v) = number(v) {
                        check(l, v, format!("{key}.{}[{i}]", l.key))?;
                    }
                }
            }
            Some(v) => {
                if let Some(v) = number(v) {
                    check(l, v, format!("{key}.{}", l.key))?;
                }
            }
            None => {}
        }
    }
    Ok(())
}

/// A JSON number (as a float, so that integers above i64::MAX keep their magnitude) or list of
/// numbers as the TOML value [`validate_params`] reads; `None` for anything else.
fn json_number_or_list(v: &serde_json::Value) -> Option<toml::Value> {
    match v {
        serde_json::Value::Number(n) => n.as_f64().map(toml::Value::Float),
        serde_json::Value::Array(a) => Some(toml::Value::Array(a.iter().filter_map(json_number_or_list).collect())),
        _ => None,
    }
}

/// A selection as the scenario echoes it: `name` beside the scheme's parameters.
#[doc(hidden)]
#[derive(Serialize)]
pub struct Tagged<'a, P: Serialize> {
    /// Registry name.
    pub name: &'static str,
    /// The parameters, flattened beside the name.
    #[serde(flatten)]
    pub params: &'a P,
}

/// The row of a scheme that is not built through [`Scheme`] (a workload generator, a topology).
pub const fn plain_row<P: Default + Serialize>(name: &'static str, summary: &'static str, example: &'static [&'static str]) -> SchemeRow {
    SchemeRow { name, summary, params: || param_rows::<P>(&[]), example }
}

/// The row of scheme `T` in its family's registry.
pub const fn row<Ctx: ?Sized, T: Scheme<Ctx>>() -> SchemeRow {
    SchemeRow { name: T::NAME, summary: T::SUMMARY, params: || param_rows::<T::Params>(T::LIMITS), example: T::EXAMPLE }
}

/// Declares a family of schemes from one row per scheme; see the module doc. Example:
///
/// ```ignore
/// crate::scheme_family! {
///     /// Scenario selection of a controller (`[transport.cc]`).
///     config CcConfig;
///     /// A built controller.
///     any AnyCc;
///     ctx PathInfo; what "congestion control"; key "transport.cc"; default Fixed;
///     dispatch dispatch;
///     schemes {
///         /// See [`fixed`].
///         Fixed => fixed::Fixed,
///         /// See [`smartt`] (boxed: a few hundred bytes of state).
///         Smartt => Box<smartt::Smartt>,
///     }
/// }
/// ```
#[macro_export]
macro_rules! scheme_family {
    // A family whose schemes come in two halves ([`Companion`]): the family as usual for the
    // first half, plus an enum of second halves and `$Config::$build_half()`.
    (
        $(#[$cmeta:meta])* config $Config:ident;
        $(#[$ameta:meta])* any $Any:ident;
        $(#[$hmeta:meta])* half $AnyHalf:ident built by $build_half:ident;
        ctx $Ctx:ty; what $what:literal; key $key:literal; default $Default:ident;
        dispatch $dispatch:ident, $dispatch_half:ident;
        schemes { $( $(#[$vmeta:meta])* $Variant:ident => $Ty:ty ),+ $(,)? }
    ) => {
        $crate::scheme_family! {
            $(#[$cmeta])* config $Config;
            $(#[$ameta])* any $Any;
            ctx $Ctx; what $what; key $key; default $Default;
            dispatch $dispatch;
            schemes { $( $(#[$vmeta])* $Variant => $Ty ),+ }
        }

        $(#[$hmeta])*
        #[derive(Clone, Debug)]
        pub enum $AnyHalf {
            $( $(#[$vmeta])* $Variant(<$Ty as $crate::scheme::Companion<$Ctx>>::Half), )+
        }

        impl $Config {
            /// Builds the second half of the selected scheme.
            pub fn $build_half(&self) -> $AnyHalf {
                match self { $( $Config::$Variant(p) => $AnyHalf::$Variant(<$Ty as $crate::scheme::Companion<$Ctx>>::build_half(p)), )+ }
            }
        }

        /// Forwards an expression to the second half inside every variant.
        #[allow(unused_macros)]
        macro_rules! $dispatch_half {
            ($self_:ident, $c:ident => $e:expr) => {
                match $self_ { $( $AnyHalf::$Variant($c) => $e, )+ }
            };
        }
    };
    (
        $(#[$cmeta:meta])* config $Config:ident;
        $(#[$ameta:meta])* any $Any:ident;
        ctx $Ctx:ty; what $what:literal; key $key:literal; default $Default:ident;
        dispatch $dispatch:ident;
        schemes { $( $(#[$vmeta:meta])* $Variant:ident => $Ty:ty ),+ $(,)? }
    ) => {
        $(#[$cmeta])*
        #[derive(Clone, Debug)]
        pub enum $Config {
            $( $(#[$vmeta])* $Variant(<$Ty as $crate::scheme::Scheme<$Ctx>>::Params), )+
        }

        $(#[$ameta])*
        #[derive(Clone, Debug)]
        pub enum $Any {
            $( $(#[$vmeta])* $Variant($Ty), )+
        }

        impl Default for $Config {
            fn default() -> Self {
                $Config::$Default(Default::default())
            }
        }

        impl $Config {
            /// The family's registry rows, in declaration order.
            pub const REGISTRY: &'static [$crate::scheme::SchemeRow] = &[ $( $crate::scheme::row::<$Ctx, $Ty>(), )+ ];

            /// The registry name of the selected scheme.
            pub fn name(&self) -> &'static str {
                match self { $( $Config::$Variant(_) => <$Ty as $crate::scheme::Scheme<$Ctx>>::NAME, )+ }
            }

            /// Builds one instance of the selected scheme.
            pub fn build(&self, ctx: &mut $Ctx) -> $Any {
                match self { $( $Config::$Variant(p) => $Any::$Variant(<$Ty as $crate::scheme::Scheme<$Ctx>>::build(p, ctx)), )+ }
            }

            /// Checks the parameters: declared ranges first, then the scheme's own checks.
            /// Errors name the key under the family's table.
            pub fn validate(&self) -> $crate::error::Result<()> {
                match self {
                    $( $Config::$Variant(p) => {
                        $crate::scheme::validate_params(p, <$Ty as $crate::scheme::Scheme<$Ctx>>::LIMITS, $key)?;
                        <$Ty as $crate::scheme::Scheme<$Ctx>>::check(p, $key)
                    } )+
                }
            }
        }

        impl serde::Serialize for $Config {
            fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                match self {
                    $( $Config::$Variant(p) => serde::Serialize::serialize(
                        &$crate::scheme::Tagged { name: <$Ty as $crate::scheme::Scheme<$Ctx>>::NAME, params: p },
                        s,
                    ), )+
                }
            }
        }

        impl<'de> serde::Deserialize<'de> for $Config {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                use serde::de::Error as _;
                let names = [ $( <$Ty as $crate::scheme::Scheme<$Ctx>>::NAME, )+ ];
                let allowed = names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
                let mut table = <toml::Table as serde::Deserialize>::deserialize(d)?;
                let name = match table.remove("name") {
                    Some(toml::Value::String(s)) => s,
                    Some(other) => {
                        return Err(D::Error::custom(format!(
                            "`name` must be a string naming the {}, found {}; allowed: {allowed}",
                            $what,
                            other.type_str()
                        )))
                    }
                    None => return Err(D::Error::custom(format!("missing `name` (the {}); allowed: {allowed}", $what))),
                };
                $( if name == <$Ty as $crate::scheme::Scheme<$Ctx>>::NAME {
                    <$Ty as $crate::scheme::Scheme<$Ctx>>::fill_preset(&mut table);
                    return $crate::scheme::deserialize_params(table).map($Config::$Variant);
                } )+
                Err(D::Error::custom(format!("unknown {} `{name}`; allowed: {allowed}", $what)))
            }
        }

        /// Forwards an expression to the scheme inside every variant of the built enum.
        #[allow(unused_macros)]
        macro_rules! $dispatch {
            ($self_:ident, $c:ident => $e:expr) => {
                match $self_ { $( $Any::$Variant($c) => $e, )+ }
            };
        }
    };
}

/// Deserializes a scheme's parameter table, keeping the path of a bad key in the message
/// (serde's internally tagged enums would lose it).
pub fn deserialize_params<T: serde::de::DeserializeOwned, E: serde::de::Error>(table: toml::Table) -> std::result::Result<T, E> {
    serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." {
            E::custom(inner)
        } else {
            E::custom(format!("`{path}`: {inner}"))
        }
    })
}

/// The parameters of a scheme that has none (e.g. `gate = "none"`): an empty table that still
/// rejects unknown keys.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

/// Implements `Deserialize` for a scheme-selection enum whose variants are chosen by a tag key
/// (`name = "fixed"`, `kind = "incast"`) and hold that scheme's parameter struct. Errors name
/// the offending parameter and list the registered schemes.
#[macro_export]
macro_rules! tagged_config {
    ($ty:ident, $tag:literal, $what:literal, { $($name:literal => $variant:ident($params:ty)),+ $(,)? }) => {
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                use serde::de::Error as _;
                let allowed = [$(concat!("`", $name, "`")),+].join(", ");
                let mut table = <toml::Table as serde::Deserialize>::deserialize(d)?;
                let name = match table.remove($tag) {
                    Some(toml::Value::String(s)) => s,
                    Some(other) => {
                        return Err(D::Error::custom(format!(
                            "`{}` must be a string naming the {}, found {}; allowed: {allowed}",
                            $tag,
                            $what,
                            other.type_str()
                        )))
                    }
                    None => return Err(D::Error::custom(format!("missing `{}` (the {}); allowed: {allowed}", $tag, $what))),
                };
                match name.as_str() {
                    $($name => $crate::scheme::deserialize_params::<$params, D::Error>(table).map($ty::$variant),)+
                    other => Err(D::Error::custom(format!("unknown {} `{other}`; allowed: {allowed}", $what))),
                }
            }
        }
    };
}
