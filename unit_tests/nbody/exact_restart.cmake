# Exact restarts of `kosmos nbody` for one integrator: the final ensemble (binary: exact doubles)
# and the report must be byte for byte the same for
#   - steps-per-launch 1000 and 7,
#   - no checkpoints and checkpoints every INTERVAL (not on the dt grid),
#   - the uninterrupted run and one stopped by its iteration budget (STOP steps, after its first
#     checkpoints) and resumed from its checkpoint.
# The destination is off the dt grid, so that the landing step is exercised too.
# -DKOSMOS=tool -DNAME=prefix -DRUN=common arguments (;-list) -DINTERVAL=T -DSTOP=steps
function(run expect_code)
  execute_process(COMMAND ${KOSMOS} nbody ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL expect_code)
    message(FATAL_ERROR "kosmos nbody ${ARGN}: exit ${code}, expected ${expect_code}\n${out}\n${err}")
  endif()
endfunction()
function(same a b)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${a} ${b} RESULT_VARIABLE differ)
  if(differ)
    message(FATAL_ERROR "${a} and ${b} differ")
  endif()
endfunction()

file(REMOVE ${NAME}_c.ckpt ${NAME}_r.ckpt)
run(0 ${RUN} --output ${NAME}_a.bin --report ${NAME}_a.txt)
run(0 ${RUN} --steps-per-launch 7 --output ${NAME}_b.bin --report ${NAME}_b.txt)
same(${NAME}_a.bin ${NAME}_b.bin)
same(${NAME}_a.txt ${NAME}_b.txt)
run(0 ${RUN} --checkpoint ${NAME}_c.ckpt --checkpoint-interval ${INTERVAL} --output ${NAME}_c.bin --report ${NAME}_c.txt)
same(${NAME}_a.bin ${NAME}_c.bin)
same(${NAME}_a.txt ${NAME}_c.txt)
# Stopped short by the budget (exit 1), then resumed with the checkpoint's settings (outputs
# included) and a budget large enough.
run(1 ${RUN} --checkpoint ${NAME}_r.ckpt --checkpoint-interval ${INTERVAL} --max-iterations ${STOP}
    --steps-per-launch 7 --output ${NAME}_r.bin --report ${NAME}_r.txt)
run(0 --resume ${NAME}_r.ckpt --max-iterations 1e15)
same(${NAME}_a.bin ${NAME}_r.bin)
same(${NAME}_a.txt ${NAME}_r.txt)

# A checkpoint without its destination (the key renamed, the checksum made valid again) is
# refused with the key's name, never resumed with a default.
if(PYTHON)
  set(rename [=[
import sys
data = bytearray(open(sys.argv[1], 'rb').read())
at = data.find(b'setting:destination\t')
assert at > 0
data[at:at + 9] = b'setting:x'
h = 1469598103934665603
for byte in data[8:-8]:
    h = ((h ^ byte) * 1099511628211) % (1 << 64)
data[-8:] = h.to_bytes(8, 'little')
open(sys.argv[2], 'wb').write(data)
]=])
  execute_process(COMMAND ${PYTHON} -c "${rename}" ${NAME}_c.ckpt ${NAME}_no_destination.ckpt RESULT_VARIABLE code)
  if(code)
    message(FATAL_ERROR "could not write ${NAME}_no_destination.ckpt")
  endif()
  execute_process(COMMAND ${KOSMOS} nbody --resume ${NAME}_no_destination.ckpt RESULT_VARIABLE code
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL 1 OR NOT err MATCHES "lacks the setting 'destination'")
    message(FATAL_ERROR "a checkpoint without destination: exit ${code}\n${out}\n${err}")
  endif()
endif()
