# Finds the HDF5 C library as the imported target Kosmos::hdf5. Included by Kosmos' build and by
# the installed KosmosConfig.cmake. Debian's libhdf5-dev keeps the serial flavour under
# hdf5/serial; a plain prefix layout (include/hdf5.h, lib/libhdf5.so) works too.
if(NOT TARGET Kosmos::hdf5)
  find_path(KOSMOS_HDF5_INCLUDE_DIR hdf5.h PATH_SUFFIXES hdf5/serial)
  find_library(KOSMOS_HDF5_LIBRARY NAMES hdf5_serial hdf5 PATH_SUFFIXES hdf5/serial)
  if(KOSMOS_HDF5_INCLUDE_DIR AND KOSMOS_HDF5_LIBRARY)
    add_library(Kosmos::hdf5 UNKNOWN IMPORTED GLOBAL)
    set_target_properties(Kosmos::hdf5 PROPERTIES
      IMPORTED_LOCATION "${KOSMOS_HDF5_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${KOSMOS_HDF5_INCLUDE_DIR}")
  endif()
endif()
