//! The modelled Intel Gen GPU device.
