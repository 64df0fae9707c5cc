target_sources(kosmos_cli PRIVATE ${CMAKE_CURRENT_LIST_DIR}/dust.cpp)
