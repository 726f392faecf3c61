use super::*;
use crate::advisor::fixtures::advisor;
