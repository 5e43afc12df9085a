// The declaration is all this target provides; the definition is in libFuzzer.
#include "CLibFuzzer.h"
