target_sources(kosmos_cli PRIVATE ${CMAKE_CURRENT_LIST_DIR}/dust.cpp)
# Default folder of the DustEM data files of --dust-model (--dust-data or $KOSMOS_DUST_DATA override it).
target_compile_definitions(kosmos_cli PRIVATE KOSMOS_DUST_DATA_DIR="${PROJECT_SOURCE_DIR}/data/dust/dustem"
                           KOSMOS_FILTER_DATA_DIR="${PROJECT_SOURCE_DIR}/data/filters")
