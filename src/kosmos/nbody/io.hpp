// Ensemble files: a text format for people, a binary format (exact doubles, checksummed) for
// checkpoints, and HDF5 for exchange with other tools. Every write goes through kosmos::io::write_atomically.
//
// Text format ('#' starts a comment):
//   kosmos-nbody-ensemble 1
//   systems <n_sys> bodies <n_bodies> attributes <n_attr>
//   system <index> time <t> state <active|inactive|disabled> reason <name> step <dt> [attr ...]
//   <m> <x> <y> <z> <vx> <vy> <vz>          (n_bodies lines per system)
// Body lines may hold nan/inf: such systems are read and then disabled by validate().
#pragma once

#include <kosmos/nbody/ensemble.hpp>

#include <map>
#include <string>

namespace kosmos {
namespace nbody {

void write_text(const std::string& path, const HostEnsemble& ens);
HostEnsemble read_text(const std::string& path);

// Binary: magic, version, shape, key/value metadata, the data, and an FNV-1a checksum.
void write_binary(const std::string& path, const HostEnsemble& ens,
                  const std::map<std::string, std::string>& metadata = {});
HostEnsemble read_binary(const std::string& path, std::map<std::string, std::string>* metadata = nullptr);

// HDF5 (paths ending in .h5/.hdf5; needs a build with HDF5): datasets time, step, state, reason
// [systems], mass [systems, bodies], position and velocity [systems, bodies, 3], attributes
// [systems, attributes], metadata/keys and metadata/values (strings); root attributes format =
// "kosmos-nbody-ensemble", version = 1, units.
void write_hdf5(const std::string& path, const HostEnsemble& ens,
                const std::map<std::string, std::string>& metadata = {});
HostEnsemble read_hdf5(const std::string& path, std::map<std::string, std::string>* metadata = nullptr);

// Reads any of the three formats (HDF5 by the path's extension, the others by their first bytes).
HostEnsemble read_ensemble(const std::string& path, std::map<std::string, std::string>* metadata = nullptr);

// Parses a state or reason name as written by write_text ("active", "close_encounter", ...).
int state_from_name(const std::string& name);
int reason_from_name(const std::string& name);

}  // namespace nbody
}  // namespace kosmos
