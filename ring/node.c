/* placeholder: being written */
#include "node.h"
