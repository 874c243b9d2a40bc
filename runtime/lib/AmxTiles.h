// Intel AMX tiles for models compiled for a CPU that has them
// (KILN_MODEL_AMX_TILES): Linux hands a process the tile state only when
// asked, and kills it at the first tile instruction otherwise.
#ifndef KILN_RUNTIME_AMXTILES_H
#define KILN_RUNTIME_AMXTILES_H

namespace kiln::rt {

/// Makes AMX-INT8 tiles usable by every thread of the process (once; later
/// calls return the first answer): null on success, else why not.
const char *requestAmxTiles();

} // namespace kiln::rt

#endif
