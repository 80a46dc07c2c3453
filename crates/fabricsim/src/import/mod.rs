//! Translators from other simulators' inputs into fabricsim scenarios. Today one:
//! [`htsim`], which turns an `htsim_uec` / `htsim_eqds` command line into a scenario TOML
//! (`fabricsim from-htsim`).

pub mod htsim;

#[cfg(test)]
mod tests;
