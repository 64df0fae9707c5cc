# Python for the bindings (python/): an interpreter with numpy, its development files and pybind11.
# Sets KOSMOS_PYTHON_FOUND. Without Python3_EXECUTABLE given, the first python3 on PATH that
# imports numpy is taken, then the system's: a pyenv or virtualenv python3 without numpy ahead on
# PATH would otherwise be picked and fail.
set(KOSMOS_PYTHON_FOUND OFF)
if(NOT Python3_EXECUTABLE)
  string(REPLACE ":" ";" _kosmos_path "$ENV{PATH}")
  foreach(_kosmos_dir IN LISTS _kosmos_path ITEMS /usr/bin /usr/local/bin)
    if(EXISTS "${_kosmos_dir}/python3")
      execute_process(COMMAND "${_kosmos_dir}/python3" -c "import numpy"
                      RESULT_VARIABLE _kosmos_numpy OUTPUT_QUIET ERROR_QUIET)
      if(_kosmos_numpy EQUAL 0)
        set(Python3_EXECUTABLE "${_kosmos_dir}/python3" CACHE FILEPATH "Python interpreter of the bindings")
        break()
      endif()
    endif()
  endforeach()
endif()
if(Python3_EXECUTABLE)
  find_package(Python3 COMPONENTS Interpreter Development.Module NumPy QUIET)
  if(Python3_FOUND AND Python3_NumPy_FOUND)
    # pybind11 from Debian (pybind11-dev), else the interpreter's own (pip install pybind11).
    execute_process(COMMAND "${Python3_EXECUTABLE}" -c "import pybind11; print(pybind11.get_cmake_dir())"
                    OUTPUT_VARIABLE _kosmos_pybind11_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    find_package(pybind11 CONFIG QUIET HINTS ${_kosmos_pybind11_dir})
    if(pybind11_FOUND)
      set(KOSMOS_PYTHON_FOUND ON)
    endif()
  endif()
endif()
