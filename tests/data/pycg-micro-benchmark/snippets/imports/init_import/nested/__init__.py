from .nested import smth
