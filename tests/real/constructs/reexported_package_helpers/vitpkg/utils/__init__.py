from .dist import *
