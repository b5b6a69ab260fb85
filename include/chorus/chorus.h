// Everything a Chorus user includes.
#pragma once

#include "chorus/communicator.h"
#include "chorus/config.h"
#include "chorus/memory.h"
#include "chorus/status.h"
#include "chorus/types.h"
#include "chorus/unique_id.h"
